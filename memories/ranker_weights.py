"""Weights of the learned first-stage order (memories.learned_rank), written by bench/train_ranker.py:

    bench/train_ranker.py locomo10.json --conversations 5 --locomo-context --l2 0.001

Trained on LoCoMo conversations 1-5 only (evaluate on the others).
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
    0.175835,
    0.169064,
    0.154941,
    0.00453719,
    0,
    0.167374,
    0.0899932,
    0.514504,
    0.383586,
    0,
    0.709639,
    0,
    0,
)
SCALES = (
    0.221973,
    0.226068,
    0.230446,
    0.0529748,
    1,
    0.148185,
    0.156231,
    0.239631,
    0.180408,
    1,
    0.0514275,
    1,
    1,
)
WEIGHTS = (
    0.372195,
    0.429974,
    -0.115695,
    -0.090009,
    0,
    0.190381,
    0.0884472,
    0.0657819,
    0.450322,
    0,
    0.171064,
    0,
    0,
)
BIAS = -4.70391
