"""Weights of the learned first-stage order (memories.search.learned_rank), written by bench/train_ranker.py:

    bench/train_ranker.py locomo10.json --conversations 5 --locomo-context --extra bench/data/train_ranker.json --extra-weight 4.0 --l2 0.001

Trained on LoCoMo conversations 1-5 (evaluate on the others) and bench/data/train_ranker.json.
"""

FEATURES = (
    "lexical",
    "english",
    "multilingual",
    "recent",
    "feedback",
    "fused",
    "fused_place",
    "rankings_share",
    "overlap",
    "cross_script",
    "length",
    "episodic",
    "temporary",
)
MEANS = (
    0.175098,
    0.170641,
    0.159667,
    0.00461748,
    0,
    0.169497,
    0.0926382,
    0.515671,
    0.405557,
    0.00657126,
    0.707906,
    0.00228565,
    0,
)
SCALES = (
    0.223469,
    0.227864,
    0.234297,
    0.053438,
    1,
    0.150554,
    0.159813,
    0.239251,
    0.191527,
    0.0807965,
    0.0535968,
    0.0477539,
    1,
)
WEIGHTS = (
    0.0473402,
    0.0982602,
    -0.088457,
    -0.0378254,
    0,
    0.646291,
    0.16028,
    -0.0725406,
    0.510636,
    0.304011,
    0.191663,
    -0.0215105,
    0,
)
BIAS = -4.65867
