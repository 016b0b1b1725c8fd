"""Weights of the learned first-stage order (memories.learned_rank), written by bench/train_ranker.py."""

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
    "age",
)
MEANS = (0.0,) * len(FEATURES)
SCALES = (1.0,) * len(FEATURES)
WEIGHTS = (0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
BIAS = -2.0
