"""Reranker client against real fake rerank servers: every response shape, logits, bad answers, limits."""

import math
import time

import pytest

from kenfold.provider_settings import rerank_from_env
from kenfold_common.env import ConfigError
from memories.providers.rerank import Reranker, RerankError, reranker_from_settings
from tests.provider_servers import Received, Reply, provider_server

DOCUMENTS = [
    "payments are idempotent on the event id",
    "the docs site uses dark mode",
    "deploys happen on fridays",
]
SCORES = [0.9, 0.05, 0.4]


def sigmoid(logit: float) -> float:
    return 1 / (1 + math.exp(-logit))


def rerank(url: str, documents: list[str] = DOCUMENTS, **options: object) -> list[float]:
    return Reranker(url=f"{url}/v1", **options).rerank("how do we avoid charging twice", documents)


def ranked(scores: list[float], key: str = "relevance_score") -> list[dict[str, object]]:
    """Results best first, as rerank APIs order them."""
    order = sorted(range(len(scores)), key=lambda index: -scores[index])
    return [{"index": index, key: scores[index]} for index in order]


@pytest.mark.parametrize(
    "answer",
    [
        {"results": ranked(SCORES)},  # llama.cpp, Jina, Cohere
        {"object": "list", "data": ranked(SCORES), "model": "rerank-2"},  # Voyage
        ranked(SCORES, key="score"),  # TEI
    ],
    ids=["results", "data", "bare-list"],
)
def test_each_response_shape_gives_scores_in_input_order(answer: object) -> None:
    with provider_server(lambda r: Reply(json=answer)) as server:
        assert rerank(server.url) == SCORES
    request = server.received[0]
    assert request.path == "/v1/rerank"
    assert request.json == {
        "model": "bge-reranker-v2-m3",
        "query": "how do we avoid charging twice",
        "documents": DOCUMENTS,
        "top_n": 3,
    }


def test_logits_are_mapped_through_a_sigmoid() -> None:
    logits = [3.5, -7.25, 0.5]  # llama.cpp answers bge-reranker's raw logits
    with provider_server(lambda r: Reply(json={"results": ranked(logits)})) as server:
        scores = rerank(server.url)
    assert scores == pytest.approx([sigmoid(logit) for logit in logits])
    assert scores[0] > scores[2] > scores[1]


def test_extreme_logits_do_not_overflow() -> None:
    with provider_server(lambda r: Reply(json={"results": ranked([1000.0, -1000.0])})) as server:
        assert rerank(server.url, documents=["a", "b"]) == [1.0, 0.0]


def test_query_and_documents_are_cut_and_blank_documents_replaced() -> None:
    with provider_server(lambda r: Reply(json={"results": ranked([0.5, 0.5, 0.5])})) as server:
        Reranker(url=server.url, model="jina-reranker-v2", api_key="jina_test").rerank(
            "q" * 900, ["d" * 700, "", "  "], timeout=4
        )
    request = server.received[0]
    assert request.json["query"] == "q" * 500
    assert request.json["documents"] == ["d" * 600, " ", " "]
    assert request.json["model"] == "jina-reranker-v2"
    assert request.headers["authorization"] == "Bearer jina_test"


def test_no_documents_needs_no_request() -> None:
    with provider_server(lambda r: Reply(status=500)) as server:
        assert rerank(server.url, documents=[]) == []
    assert server.received == []


def test_tei_native_api_is_detected_once() -> None:
    def tei(received: Received) -> Reply:
        if "texts" not in received.json:
            detail = (
                b"Failed to deserialize the JSON body into the target type: missing field `texts` at line 1"
            )
            return Reply(status=422, raw=detail, headers={"Content-Type": "text/plain"})
        return Reply(json=ranked(SCORES, key="score"))

    with provider_server(tei) as server:
        reranker = Reranker(url=server.url)
        assert reranker.rerank("query", DOCUMENTS) == SCORES
        assert reranker.rerank("query", DOCUMENTS) == SCORES
    assert ["texts" in r.json for r in server.received] == [False, True, True]
    assert server.received[1].json == {"query": "query", "texts": DOCUMENTS, "truncate": True}


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"results": ranked([0.9, 0.1])}, "returned 2 scores for 3 documents"),
        (
            {"results": [*ranked([0.9, 0.1]), {"index": 3, "relevance_score": 0.5}]},
            "index 3; expected indexes 0 to 2",
        ),
        ({"results": [*ranked([0.9, 0.1]), {"index": -1, "relevance_score": 0.5}]}, "index -1"),
        ({"results": [*ranked([0.9, 0.1]), {"index": 1, "relevance_score": 0.5}]}, "index 1 twice"),
        (
            {"results": [*ranked([0.9, 0.1]), {"index": 2, "relevance_score": "high"}]},
            "score 'high' for document 2",
        ),
        ({"results": [*ranked([0.9, 0.1]), {"index": 2, "relevance_score": True}]}, "score True"),
        ({"results": [*ranked([0.9, 0.1]), {"index": 2}]}, "score None"),
        ({"scores": [0.9, 0.1, 0.5]}, "without results"),
    ],
)
def test_bad_answers_are_clear_errors(answer: object, message: str) -> None:
    with provider_server(lambda r: Reply(json=answer)) as server, pytest.raises(RerankError, match=message):
        rerank(server.url)


def test_non_finite_scores_are_refused() -> None:
    answer = b'{"results": [{"index": 0, "relevance_score": NaN}, {"index": 1, "relevance_score": 0.2}]}'
    with (
        provider_server(lambda r: Reply(raw=answer)) as server,
        pytest.raises(RerankError, match="score nan"),
    ):
        rerank(server.url, documents=["a", "b"])


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=500, json={"error": "out of memory"}), "HTTP 500: .*out of memory"),
        (Reply(status=401, json={"message": "invalid api token"}), "HTTP 401.*check KENFOLD_RERANK_API_KEY"),
        (Reply(status=404, raw=b"File Not Found"), r"HTTP 404.*Kenfold appends /rerank"),
        (Reply(raw=b"not json"), "not JSON"),
        (Reply(raw=b"[" + b"0," * 1024 * 1024 + b"0]"), "answered more than 1 MB"),
    ],
)
def test_http_failures_are_clear_errors(reply: Reply, message: str) -> None:
    with provider_server(lambda r: reply) as server, pytest.raises(RerankError, match=message):
        rerank(server.url)


def test_timeout_defaults_to_4_seconds_and_is_honoured() -> None:
    with provider_server(lambda r: Reply(delay=10, json={})) as server:
        started = time.monotonic()
        with pytest.raises(RerankError, match="did not answer within 4 s"):
            rerank(server.url)
        assert time.monotonic() - started < 5
        started = time.monotonic()
        with pytest.raises(RerankError, match=r"did not answer within 0\.3 s"):
            Reranker(url=server.url).rerank("query", DOCUMENTS, timeout=0.3)
        assert time.monotonic() - started < 1.3


def test_redirect_to_another_origin_is_refused() -> None:
    with provider_server(lambda r: Reply(json={"results": ranked(SCORES)})) as elsewhere:
        moved = Reply(status=308, headers={"Location": f"{elsewhere.url}/v1/rerank"})
        with provider_server(lambda r: moved) as server, pytest.raises(RerankError, match="another origin"):
            rerank(server.url, api_key="secret")
    assert elsewhere.received == []


def reranker_from_env() -> Reranker | None:
    return reranker_from_settings(rerank=rerank_from_env())


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("URL", "MODEL", "API_KEY"):
        monkeypatch.delenv(f"KENFOLD_RERANK_{name}", raising=False)
    assert reranker_from_env() is None
    monkeypatch.setenv("KENFOLD_RERANK_URL", "http://127.0.0.1:8012/v1")
    reranker = reranker_from_env()
    assert reranker is not None and reranker.model == "bge-reranker-v2-m3"
    monkeypatch.setenv("KENFOLD_RERANK_MODEL", "jina-reranker-v2-base-multilingual")
    reranker = reranker_from_env()
    assert reranker is not None and reranker.model == "jina-reranker-v2-base-multilingual"
    monkeypatch.setenv("KENFOLD_RERANK_URL", "key:s3cret@127.0.0.1:8012")
    with pytest.raises(ConfigError, match=r"^KENFOLD_RERANK_URL is not a valid URL") as caught:
        rerank_from_env()
    assert "s3cret" not in str(caught.value), "a URL may carry credentials: never echoed"
