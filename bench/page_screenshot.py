"""The page at / of `nmt serve`, checked once in a real browser (`make bench-page`).

Starts the server on 127.0.0.1, opens /?text=... in headless Chromium (Debian's `chromium`
package: `apt-get install chromium`), lets the page's script call /translate, and saves a
screenshot to bench/results/serve_page.png. The translation is also fetched over HTTP and printed,
so that the screenshot can be compared with it.

    python -m bench.page_screenshot [-c runs/demo/checkpoints/best.pt]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

from bench.serve_load import RESULTS, start_server
from tools.results import record

TEXT = "A little girl in a pink dress is climbing the stairs.\nTwo men are playing football in the park."


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint", default="runs/demo/checkpoints/best.pt")
    parser.add_argument("--out", default=str(RESULTS / "serve_page.png"))
    args = parser.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise SystemExit("chromium not found: apt-get install chromium")
    if not Path(args.checkpoint).exists():
        raise SystemExit(f"{args.checkpoint}: not found (run `make demo` first, or pass -c)")
    process, url = start_server(args.checkpoint, ["--threads", "2"])
    try:
        page = f"{url}/?{urllib.parse.urlencode({'text': TEXT})}"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1100,620", "--virtual-time-budget=20000", f"--screenshot={args.out}", page],
                       check=True, capture_output=True, timeout=120)
        request = urllib.request.Request(url + "/translate", data=json.dumps({"text": TEXT.split("\n")}).encode(),
                                         headers={"Content-Type": "application/json"})
        print(json.loads(urllib.request.urlopen(request, timeout=60).read())["translations"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    record([args.out])
    print(f"screenshot: {args.out}")


if __name__ == "__main__":
    main()
