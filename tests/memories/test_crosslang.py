"""The bridge ranking across scripts (memories/search/crosslang.py) on its own: its order, and what it reads."""

import random
import uuid

from memories.search import crosslang
from memories.search.lexical import korean_stem

RULE = "운영 배포는 화요일과 목요일 오후 2시에만 수동 승인으로 진행한다."
SUMMARY = "세션 요약: production 잡을 수동 승인 방식으로 바꾸고 운영 배포 창을 정했다."
OTHER = "장바구니 조회 API 성능 개선 중, 남은 작업은 캐시 적용."
ENGLISH = "Production logs are kept for 30 days in the logs bucket."


def test_the_order_does_not_depend_on_the_order_the_candidates_come_in() -> None:
    texts = {uuid.UUID(int=index): text for index, text in enumerate([ENGLISH, RULE, SUMMARY, OTHER])}
    query = "On which days can the shop go to production?"
    first = crosslang.bridge_ranking(query=query, texts=texts)
    assert first[0] == uuid.UUID(int=1), "the rule shares the summary's Korean words"
    assert all(texts[memory_id] != ENGLISH for memory_id in first), "English memories are not ranked"
    items = list(texts.items())
    for seed in range(5):
        random.Random(seed).shuffle(items)
        assert crosslang.bridge_ranking(query=query, texts=dict(items)) == first


def test_nothing_to_bridge_gives_no_ranking() -> None:
    english_only = {uuid.UUID(int=1): ENGLISH}
    assert crosslang.bridge_ranking(query="production logs", texts=english_only) == []
    assert crosslang.bridge_ranking(query="운영 배포는 언제 해?", texts={uuid.UUID(int=1): RULE}) == []
    assert crosslang.bridge_ranking(query="the", texts={uuid.UUID(int=1): SUMMARY}) == []


def test_korean_stems_are_the_full_text_searchs() -> None:
    for word in ["정산금은", "지급돼", "배포는", "승인으로", "에서는", "합니다", "웹훅을", "목요일", "가"]:
        assert crosslang._stem(word) == korean_stem(word), word
