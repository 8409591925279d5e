"""HTTP serving of a trained model (optional extra: pip install 'nmt[serve]').

`from nmt.serve import create_app, serve, ServeLimits` loads the web application (fastapi) when
first asked for; a worker process, which imports nmt.serve.worker_process, never loads it.
"""

__all__ = ["ServeLimits", "create_app", "serve"]


def __getattr__(name: str):
    if name in __all__:
        from nmt.serve import app

        return getattr(app, name)
    raise AttributeError(f"module 'nmt.serve' has no attribute {name!r}")
