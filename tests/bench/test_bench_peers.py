"""`make bench-peers`: the ratios it reports, from its runs' figures."""

from bench.peers import ratios


def test_ratios_put_nmt_over_each_peer_from_the_same_run():
    nmt = {"training": {"target_tokens_per_s": 3000},
           "decoding_100_sentences_20_tokens": {"beam4": {"seconds": 1.0}}}
    eole = [{"target_tokens_per_s": [1900, 2100], "decode_100_sentences_beam4_20_tokens_s":
             {"eole": 1.6, "ctranslate2_fp32": 0.8, "ctranslate2_int8": 0.5}},
            {"target_tokens_per_s": [2000], "decode_100_sentences_beam4_20_tokens_s":
             {"eole": 1.8, "ctranslate2_fp32": 0.9, "ctranslate2_int8": 0.6}},
            {"script": "eole.sh", "error": ["no index"]}]  # a failed run counts for nothing
    joeynmt = {"target_tokens_per_s": [500, 700]}
    assert ratios(nmt, eole, joeynmt) == {
        "training_nmt_over_eole": 1.5, "decoding_eole_over_nmt": 1.7, "decoding_ctranslate2_fp32_over_nmt": 0.85,
        "decoding_ctranslate2_int8_over_nmt": 0.55, "training_nmt_over_joeynmt": 5.0}
    assert ratios(nmt, [], None) == {}
