"""Latency and scale benchmark: `recall`, `get_context` and `remember` through the real MCP endpoint.

    .venv/bin/python bench/latency.py --sizes 10000,100000 [--clients 4] [--duration 30] [--repeats 3]
        [--max-calls 5000] [--remember-count 300] [--embed MODE] [--json OUT]
        [--docs docs/benchmarks.md | --no-docs] [--explain-out FILE] [--keep]

--embed is the server's KENFOLD_EMBED (default: the variable's value here, else unset, the product's
default: MiniLM plus the multilingual Universal Sentence Encoder); `local-english` measures MiniLM alone.
Every process started here (manage commands, the in-process tasks, the server) gets the same value, and
the corpus carries vectors of every model that configuration embeds with.

For each size N, in a fresh throwaway KENFOLD_HOME (embedded cluster, KENFOLD_EMBEDDED_DURABLE=false:
fsync and synchronous_commit off, for loading speed; the tests run the same way):

1. `manage.py migrate` and `manage.py key create bench`.
2. N synthetic memories bulk-loaded with COPY (not through remember, far too slow at 1M): 20 projects of
   Zipf-like sizes plus the user scope, every memory type, ~85% active (the rest superseded, deleted,
   proposed preferences, and temporary notes that have mostly expired), ~20% Korean, created_at spread
   over a year. Texts come from templates filled from a few hundred domain words, so a query word
   matches a realistic share of rows, not all of them.
   Embeddings: every model of the configured embedders (`providers.embedders()` under --embed; by
   default only all-MiniLM-L6-v2 int8) embeds a few thousand distinct template sentences ("bases"); each
   memory gets, per model, its base's vector plus Gaussian noise (sigma 0.02 per dimension at 384
   dimensions, scaled by sqrt(384 / dimensions) so every model's copies lie at cosine ~0.93 to their
   base), re-normalized: one memory_embedding row per memory and model. Embedding 1M texts on 2 cores
   would take hours; the derived vectors keep each real model's geometry between bases and give every
   memory its own point.
   Secondary indexes are dropped during COPY and re-created from their own definitions
   (pg_get_indexdef) afterwards; foreign-key triggers are off during COPY (the data is consistent by
   construction). Each model's HNSW index is then built by the product's own `ensure_model_index`, and
   VACUUM ANALYZE runs (what autovacuum would do on a live database).
3. An in-process stage breakdown (query embedding and vector SQL of every model, lexical SQL, the whole
   pipeline), then
   `manage.py serve` (gunicorn's ASGI worker, KENFOLD_WORKERS=2, the default) on a free 127.0.0.1 port.
4. The MCP SDK's client (mode "auto", one session per simulated agent) drives `recall` and `get_context`
   with 1 and K concurrent clients, each phase bounded by --duration seconds and --max-calls calls, and
   repeated --repeats times (phases interleaved, so a noisy neighbour hurts every phase alike); then
   `remember` of --remember-count distinct new memories with K clients. Latency is measured per call,
   client-side: it includes HTTP, the MCP layer, and the query embedding on the server.
5. At the largest size, EXPLAIN (ANALYZE, BUFFERS) of every SQL statement recall and get_context run
   (captured from the product code, so the SQL is the real one) is written to --explain-out.

Results are printed, written as JSON (--json), and put in the "Latency and scale" section of
docs/benchmarks.md (other sections are left as they are). Every server and cluster started here is
stopped on exit, on Ctrl-C and on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# The product's default embedder (KENFOLD_EMBED unset); --embed may add or replace models.
MODEL_NAME = "all-minilm-l6-v2-int8"
DIMS = 384
# Noise per dimension at DIMS dimensions; other dimensions scale it to the same cosine to the base.
NOISE_SIGMA = 0.02
# --embed values: the local models (the benchmark strips every other KENFOLD_* variable, so `http`
# could not reach a provider, and `off` has no vectors to measure).
EMBED_MODES = ("local", "local-english", "local-multilingual")
SEED = 20261130
AGENT = "bench"
DOCS_HEADING = "## Latency and scale"
RESULT_PREFIX = "RESULT "
TARGETS_MS = {100_000: 30.0, 1_000_000: 60.0}

# --- vocabulary -----------------------------------------------------------------------------------------


def _items(text: str) -> list[str]:
    return [item.strip() for item in text.split("|") if item.strip()]


AREAS = _items(
    "billing|auth|payments|search|webhooks|invoices|notifications|onboarding|checkout|analytics|reporting|"
    "inventory|shipping|pricing|subscriptions|sessions|uploads|exports|imports|scheduler|cache|queue|"
    "gateway|dashboard|profile|permissions|audit log|ledger|refunds|coupons|catalog|recommendations|"
    "geolocation|translations|email|sms|push|chat|comments|feed|media|thumbnails|video transcoding|metrics|"
    "tracing|logging|alerting|backups|migrations|tenants|teams|invites|settings|rate limiter|feature flags|"
    "fraud detection|tax calculation|currency conversion|order history|wishlist|cart|returns|warehouse|"
    "routing|maps|calendar|booking|reviews|ratings|loyalty points|referrals|gift cards|statements|payouts|"
    "kyc|consent|gdpr export|password reset|sso|api keys|webhook signing|audit trail|search ranking"
)
KINDS = _items(
    "service|worker|API|client|module|handler|controller|job|pipeline|cron task|middleware|adapter|"
    "repository|resolver|consumer|producer|endpoint|component|hook|store|reducer|schema|model|view|"
    "serializer|CLI|migration script|lambda|sidecar|daemon"
)
TECHS = _items(
    "PostgreSQL|Redis|Kafka|RabbitMQ|Celery|Django|FastAPI|React|Vue|Svelte|TypeScript|Go|Rust|gRPC|"
    "GraphQL|S3|Terraform|Kubernetes|Helm|Docker|nginx|Envoy|Sentry|Prometheus|Grafana|OpenTelemetry|"
    "pytest|Jest|Playwright|Cypress|webpack|Vite|esbuild|ESLint|ruff|mypy|Poetry|uv|pnpm|Yarn|Node|Deno|"
    "Bun|SQLite|DynamoDB|Elasticsearch|OpenSearch|ClickHouse|Snowflake|BigQuery|Airflow|dbt|Spark|Flink|"
    "pandas|NumPy|Stripe|Twilio|SendGrid|Auth0|Okta|Keycloak|JWT|OAuth|SAML|Cloudflare|Fastly|Vercel|"
    "Netlify|Heroku|SQS|SNS|PgBouncer|Alembic|Prisma|SQLAlchemy|TypeORM|Sequelize|Tailwind|Storybook|"
    "Next.js|Nuxt|Remix|Astro|Temporal|NATS|etcd|Consul|Vault|MinIO|Jaeger|Loki|Tempo|Argo CD|Flux"
)
TOOLS = _items(
    "ruff|mypy|pytest|the linter|the type checker|the migration check|make lint|make test|pre-commit|"
    "the contract tests|the load test|the snapshot tests|eslint --fix|tsc --noEmit|cargo clippy|go vet|"
    "the security scan|the license check|the schema diff|the e2e suite"
)
OBJECTS = _items(
    "events|messages|jobs|requests|records|invoices|payments|tokens|uploads|webhooks|emails|reports|"
    "exports|notifications|orders|refunds|sessions|images|batches|rows|documents|tasks|alerts|metrics|"
    "traces|logs|users|accounts|tenants|coupons"
)
PURPOSES = _items(
    "caching|rate limiting|idempotency keys|deduplication|background jobs|full-text search|session storage|"
    "feature flags|distributed locks|leader election|audit logging|request tracing|schema validation|"
    "retries|circuit breaking|pagination|bulk imports|CSV exports|image resizing|PDF rendering|"
    "cron scheduling|secret storage|config reloads|health checks|blue-green deploys|canary releases|"
    "A/B tests|usage metering|quota enforcement|currency rounding"
)
REASONS = _items(
    "the old client leaked connections|latency doubled under load|the license changed|it was unmaintained|"
    "costs grew too fast|it could not handle backpressure|migrations were too slow|the team knew it better|"
    "it lacked transactions|it dropped messages on restart|cold starts were too slow|memory use kept growing|"
    "the vendor raised prices|we needed exactly-once delivery|debugging was painful|tests were flaky|"
    "it did not support IPv6|its TLS defaults were weak|it had no async API|the SDK was deprecated"
)
PROBLEMS = _items(
    "a race condition|a deadlock|a memory leak|duplicate writes|stale cache entries|a timezone bug|"
    "an off-by-one error|a null pointer crash|slow queries|a connection pool exhaustion|lost updates|"
    "a retry storm|a broken migration|an encoding bug|double charging|a missing index|a flaky test|"
    "an N+1 query|a wrong rounding mode|an expired certificate|a header size overflow|a thundering herd|"
    "a silent truncation|a cache stampede|an unbounded queue"
)
CONDITIONS = _items(
    "two requests arrive at once|the queue is full|the token expires mid-request|daylight saving time starts|"
    "the payload is larger than 1 MB|the replica lags|the upstream times out|a tenant has no plan|"
    "the user has two sessions|the job is retried|the cache is cold|the disk is almost full|"
    "a webhook is delivered twice|the locale is Korean|the CSV has a BOM"
)
FIXES = _items(
    "adding a unique constraint|taking an advisory lock|batching the writes|adding an index|"
    "switching to UTC everywhere|bounding the queue|adding jitter to retries|using SELECT FOR UPDATE|"
    "moving the work to a background job|caching the lookup|streaming the response|"
    "pinning the client version|adding a circuit breaker|normalizing the input|splitting the transaction"
)
FOLLOWUPS = _items(
    "add a regression test|backfill the old rows|update the runbook|remove the feature flag|"
    "tell the support team|write the migration|benchmark it under load|clean up the dead code|"
    "rotate the credentials|document the new limits|check the dashboards tomorrow|open a PR for review"
)
STYLES = _items(
    "early returns|small pure functions|explicit type hints|dataclasses over dicts|composition over "
    "inheritance|descriptive variable names|f-strings|pathlib over os.path|async code only at the edges|"
    "table-driven tests|guard clauses|immutable data|short commit messages|conventional commits|"
    "docstrings on public functions|no abbreviations|snake_case file names|tabs for indentation|"
    "two-space indentation|trailing commas"
)
LANGS = _items("Python|TypeScript|Go|Rust|Kotlin|Swift|Java|SQL|Bash|Ruby")
ENVS = _items("staging|production|dev|the canary cluster|eu-west|us-east|the preview env")
PEOPLE = _items("minji|jae|sora|hyun|alex|sam|priya|lucas|emma|noah|yuki|omar")
VERBS = _items(
    "load|save|sync|parse|render|validate|fetch|build|resolve|apply|refresh|compute|dispatch|normalize"
)
EXTS = _items("py|ts|go|rs|tsx|sql|kt")

AREAS_KO = _items(
    "결제|인증|정산|검색|웹훅|청구서|알림|온보딩|주문|분석|리포트|재고|배송|가격|구독|세션|업로드|내보내기|"
    "가져오기|스케줄러|캐시|큐|게이트웨이|대시보드|프로필|권한|감사 로그|원장|환불|쿠폰|카탈로그|추천|번역|"
    "이메일|문자 발송|푸시 알림|채팅|댓글|피드|미디어|썸네일|지표|로깅|경보|백업|마이그레이션|테넌트|"
    "팀 초대|설정|요청 제한|기능 플래그|부정 거래 탐지|세금 계산|환율 변환|장바구니|반품|창고|예약|리뷰|"
    "포인트 적립|추천인 보상|상품권|정산 명세서|지급"
)
KINDS_KO = _items("서비스|워커|모듈|핸들러|배치 작업|파이프라인|미들웨어|어댑터|API|컨슈머|스크립트|데몬")
OBJECTS_KO = _items(
    "이벤트|메시지|작업|요청|레코드|청구서|결제 건|토큰|파일|웹훅|이메일|보고서|주문|환불 건|세션"
)
PURPOSES_KO = _items(
    "캐싱하기|요청을 제한하기|중복을 제거하기|백그라운드 작업을 돌리기|전문 검색을 하기|세션을 저장하기|"
    "분산 락을 잡기|감사 로그를 남기기|요청을 추적하기|재시도를 처리하기|대량 가져오기를 하기|사용량을 집계하기"
)
REASONS_KO = _items(
    "기존 클라이언트가 커넥션을 누수했기 때문|부하가 걸리면 지연 시간이 두 배가 되었기 때문|"
    "라이선스가 바뀌었기 때문|유지보수가 끊겼기 때문|비용이 너무 빨리 늘었기 때문|재시작 때 메시지를 잃었기 때문|"
    "테스트가 자주 깨졌기 때문|비동기 API가 없었기 때문"
)
PROBLEMS_KO = _items(
    "경쟁 상태|데드락|메모리 누수|중복 쓰기|오래된 캐시|시간대 버그|느린 쿼리|커넥션 풀 고갈|업데이트 유실|"
    "재시도 폭주|마이그레이션 실패|인코딩 깨짐|이중 결제|인덱스 누락|불안정한 테스트|반올림 오류"
)
CONDITIONS_KO = _items(
    "요청 두 개가 동시에 들어올|큐가 가득 찼을|토큰이 요청 중에 만료될|복제본이 지연될|상위 서비스가 타임아웃될|"
    "작업이 재시도될|캐시가 비어 있을|웹훅이 두 번 전달될"
)
FIXES_KO = _items(
    "유니크 제약 추가|어드바이저리 락 사용|쓰기 묶음 처리|인덱스 추가|UTC로 통일|큐 크기 제한|재시도에 지터 추가|"
    "백그라운드 작업으로 이동|조회 결과 캐싱|트랜잭션 분리"
)
FOLLOWUPS_KO = _items(
    "회귀 테스트 추가|기존 데이터 백필|런북 업데이트|기능 플래그 제거|마이그레이션 작성|부하 테스트|"
    "죽은 코드 정리|대시보드 확인|리뷰 요청"
)
STYLES_KO = _items(
    "이른 반환|작은 순수 함수|명시적인 타입 힌트|짧은 커밋 메시지|설명적인 변수 이름|불변 데이터|테이블 기반 테스트"
)

SLOTS: dict[str, list[str]] = {
    "area": AREAS,
    "kind": KINDS,
    "tech": TECHS,
    "tool": TOOLS,
    "object": OBJECTS,
    "purpose": PURPOSES,
    "reason": REASONS,
    "problem": PROBLEMS,
    "condition": CONDITIONS,
    "fix": FIXES,
    "followup": FOLLOWUPS,
    "style": STYLES,
    "lang": LANGS,
    "env": ENVS,
    "person": PEOPLE,
    "area_ko": AREAS_KO,
    "kind_ko": KINDS_KO,
    "object_ko": OBJECTS_KO,
    "purpose_ko": PURPOSES_KO,
    "reason_ko": REASONS_KO,
    "problem_ko": PROBLEMS_KO,
    "condition_ko": CONDITIONS_KO,
    "fix_ko": FIXES_KO,
    "followup_ko": FOLLOWUPS_KO,
    "style_ko": STYLES_KO,
}

# (type, template); a template starting with "Handoff"/"인수인계" becomes a handoff note (attrs.kind).
TEMPLATES_EN: list[tuple[str, str]] = [
    ("project", "Decision: the {area} {kind} uses {tech} for {purpose}."),
    ("project", "We moved the {area} {kind} from {tech} to {tech2} because {reason}."),
    ("project", "Always run {tool} before merging changes to the {area} {kind}."),
    (
        "project",
        "Do not call the {area} {kind} directly from {area2}; go through the {area2} {kind2} instead.",
    ),
    ("project", "Release rule: {area} changes ship behind a feature flag in {env} first."),
    (
        "project",
        "Timeouts for {area} requests are {n} seconds; {tech} closes idle connections after {m} minutes.",
    ),
    ("project", "The {area} {kind} must stay backwards compatible with {tech} {n}.x clients."),
    (
        "project",
        "{area} {object} are retried {n} times with exponential backoff before the dead-letter queue.",
    ),
    ("codebase", "The {area} {kind} lives in {path} and exposes {func}()."),
    ("codebase", "{func}() in {path} validates {object} before the {area} {kind} stores them."),
    ("codebase", "Tests for the {area} {kind} use {tech} fixtures from tests/{slug}/conftest.py."),
    ("codebase", "The {area} {kind} reads its settings from {env_var}; the default is {n}."),
    ("codebase", "{path} wraps every {tech} call; mock it in unit tests of the {area} {kind}."),
    ("semantic", "{tech} {n}.{m} changed the default for {purpose}; pin the version in {area} deployments."),
    ("semantic", "{tech} limits {object} to {n} per request, so batch {area} calls accordingly."),
    ("semantic", "In {tech}, {purpose} needs {tech2} running next to it."),
    ("episodic", "Session summary: fixed {problem} in the {area} {kind} by {fix}; next, {followup}."),
    ("episodic", "Investigated why the {area} {kind} hit {problem} when {condition}; the fix was {fix}."),
    ("episodic", "Pairing session on {area}: moved {object} to {tech}, {n} tests still failing."),
    ("preference", "The user prefers {style} in {lang} code."),
    ("preference", "The user wants {tool} output summarized, not pasted in full."),
    ("preference", "Prefer {style} over {style2} when writing {lang}."),
    ("temporary", "Deploy freeze for the {area} {kind} until the {tech} upgrade lands."),
    ("temporary", "Temporary: the {env} {area} database is read-only during the {tech} migration."),
    ("temporary", "Handoff: halfway through moving {area} {object} to {tech}; next, {followup}."),
]
TEMPLATES_KO: list[tuple[str, str]] = [
    ("project", "결정: {area_ko} {kind_ko}는 {purpose_ko} 위해 {tech}를 사용한다."),
    ("project", "{area_ko} {kind_ko}를 {tech}에서 {tech2}로 옮겼다. {reason_ko}이다."),
    ("project", "{area_ko} 관련 변경은 머지 전에 항상 {tool}을 실행한다."),
    ("project", "{area_ko} 요청 타임아웃은 {n}초이고 재시도는 {m}번까지 한다."),
    ("codebase", "{area_ko} {kind_ko} 코드는 {path}에 있고 {func}() 함수를 노출한다."),
    ("codebase", "{area_ko} {kind_ko} 설정은 {env_var} 환경 변수에서 읽고 기본값은 {n}이다."),
    ("semantic", "{tech}는 요청당 {object_ko}를 {n}개까지만 허용하므로 {area_ko} 호출을 묶어서 보낸다."),
    (
        "episodic",
        "세션 요약: {area_ko} {kind_ko}의 {problem_ko} 문제를 {fix_ko}로 해결했다. 다음은 {followup_ko}.",
    ),
    ("episodic", "{area_ko} {kind_ko} 장애 분석: {condition_ko} 때 {problem_ko}이 발생했다."),
    ("preference", "사용자는 {lang} 코드에서 {style_ko}을 선호한다."),
    ("preference", "사용자는 {tool} 결과를 전체 붙여넣기보다 요약으로 받기를 원한다."),
    ("temporary", "{area_ko} {kind_ko} 배포 동결: {tech} 업그레이드가 끝날 때까지."),
    ("temporary", "인수인계: {area_ko} {object_ko}를 {tech}로 옮기는 중이다. 다음은 {followup_ko}."),
]
QUERIES_EN = [
    "how does the {area} {kind} handle {object}?",
    "why did we move {area} to {tech}",
    "{area} {kind} timeout settings",
    "bug in the {area} {kind} when {condition}",
    "which {tech} version do we use for {area}",
    "where is the code for {area} {object}",
    "what did we decide about {purpose} in {area}",
    "{problem} in {area}",
]
QUERIES_KO = [
    "{area_ko} {kind_ko} 타임아웃 설정은 어떻게 되어 있지?",
    "{area_ko}에서 {tech} 쓰는 이유",
    "{area_ko} {kind_ko} {problem_ko} 해결 방법",
    "{area_ko} 코드는 어디에 있어?",
    "{area_ko} {object_ko} 재시도 정책",
]
TASKS_EN = [
    "Fix {problem} in the {area} {kind}",
    "Add {purpose} to the {area} {kind} using {tech}",
    "Migrate the {area} {object} from {tech} to {tech2}",
    "Review the pull request that changes the {area} {kind}",
]
TASKS_KO = [
    "{area_ko} {kind_ko}의 {problem_ko} 문제 수정",
    "{area_ko} {kind_ko}에 {tech} 도입하기",
]
DETAILS = [
    " See KEN-{n4}.",
    " (PR #{n4})",
    " Confirmed on {date}.",
    " Owner: {person}.",
    " Measured p95 {n} ms.",
]

PROJECTS = _items(
    "billing-api|web-frontend|mobile-app|data-pipeline|auth-service|search-service|infra|notifications|"
    "admin-dashboard|payments-gateway|analytics|ml-platform|docs-site|cli-tools|sdk-python|sdk-js|"
    "design-system|support-portal|warehouse-etl|edge-proxy"
)
# Zipf-like project sizes: one or two big projects, a long tail. Queries pick projects by the same weights.
PROJECT_WEIGHTS = [1 / (rank + 1) ** 0.8 for rank in range(len(PROJECTS))]
TYPE_WEIGHTS = {
    "project": 0.33,
    "codebase": 0.22,
    "semantic": 0.13,
    "episodic": 0.15,
    "preference": 0.05,
    "temporary": 0.12,
}
KOREAN_SHARE = 0.2
AGENTS = ["claude-code", "codex", "cursor", "gemini-cli"]


class _Slots(dict[str, str]):
    """str.format_map values drawn at random per slot (`tech2` is another draw from `tech`)."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__()
        self.rng = rng

    def __missing__(self, key: str) -> str:
        rng = self.rng
        name = key.rstrip("0123456789")
        if name in SLOTS:
            value = rng.choice(SLOTS[name])
        elif name == "n":
            value = str(rng.randint(2, 120))
        elif name == "n4":
            value = str(rng.randint(100, 9999))
        elif name == "m":
            value = str(rng.randint(1, 60))
        elif name == "slug":
            value = _slug(rng.choice(AREAS))
        elif name == "path":
            value = f"src/{_slug(rng.choice(AREAS))}/{rng.choice(VERBS)}_{_slug(rng.choice(OBJECTS))}.{rng.choice(EXTS)}"
        elif name == "func":
            value = f"{rng.choice(VERBS)}_{_slug(rng.choice(OBJECTS))}"
        elif name == "env_var":
            value = f"{_slug(rng.choice(AREAS)).upper()}_{rng.choice(['TIMEOUT', 'MAX_RETRIES', 'BATCH_SIZE', 'URL', 'POOL_SIZE'])}"
        elif name == "date":
            value = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        else:
            raise KeyError(key)
        self[key] = value
        return value


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def fill(template: str, rng: random.Random) -> str:
    return template.format_map(_Slots(rng))


@dataclass(frozen=True)
class Base:
    text: str
    type: str
    korean: bool
    handoff: bool


def make_bases(count: int, rng: random.Random) -> list[Base]:
    """`count` distinct template sentences, in the type and language mix of the corpus."""
    bases: list[Base] = []
    seen: set[str] = set()
    for memory_type, weight in TYPE_WEIGHTS.items():
        for korean, share in ((False, 1 - KOREAN_SHARE), (True, KOREAN_SHARE)):
            templates = [t for ty, t in (TEMPLATES_KO if korean else TEMPLATES_EN) if ty == memory_type]
            want = max(5, round(count * weight * share))
            attempts = 0
            made = 0
            while made < want and attempts < want * 50:
                attempts += 1
                text = fill(rng.choice(templates), rng)
                if text in seen:
                    continue
                seen.add(text)
                handoff = text.startswith(("Handoff", "인수인계"))
                bases.append(Base(text=text, type=memory_type, korean=korean, handoff=handoff))
                made += 1
    return bases


def project_url(name: str, rng: random.Random) -> str:
    # Agents pass whatever remote form their checkout has; Kenfold normalizes both to one scope.
    return rng.choice([f"git@github.com:acme/{name}.git", f"https://github.com/acme/{name}"])


def make_queries(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """recall arguments: template questions (20% Korean), each with a project chosen by project size."""
    out = []
    for _ in range(count):
        korean = rng.random() < KOREAN_SHARE
        query = fill(rng.choice(QUERIES_KO if korean else QUERIES_EN), rng)
        project = rng.choices(PROJECTS, weights=PROJECT_WEIGHTS)[0]
        out.append({"query": query, "project": project_url(project, rng)})
    return out


def make_tasks(count: int, rng: random.Random) -> list[dict[str, Any]]:
    """get_context arguments: a task sentence and a project, default budget."""
    out = []
    for _ in range(count):
        korean = rng.random() < KOREAN_SHARE
        task = fill(rng.choice(TASKS_KO if korean else TASKS_EN), rng)
        project = rng.choices(PROJECTS, weights=PROJECT_WEIGHTS)[0]
        out.append({"task": task, "project": project_url(project, rng)})
    return out


def make_writes(count: int, rng: random.Random, tag: str) -> list[dict[str, Any]]:
    """remember arguments: new memories from the same templates, made distinct by a numbered tag."""
    out = []
    kinds = [t for t in TYPE_WEIGHTS if t != "preference"]
    for index in range(count):
        memory_type = rng.choices(kinds, weights=[TYPE_WEIGHTS[t] for t in kinds])[0]
        korean = rng.random() < KOREAN_SHARE
        templates = [t for ty, t in (TEMPLATES_KO if korean else TEMPLATES_EN) if ty == memory_type]
        content = f"{fill(rng.choice(templates), rng)} (bench {tag}-{index})"
        args: dict[str, Any] = {"content": content, "type": memory_type}
        if memory_type == "temporary":
            args["ttl_seconds"] = 86400
        if rng.random() < 0.9:
            args["project"] = project_url(rng.choices(PROJECTS, weights=PROJECT_WEIGHTS)[0], rng)
        out.append(args)
    return out


# --- processes ------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def kenfold_env(home: Path, embed: str, **extra: str) -> dict[str, str]:
    """A child's environment: no KENFOLD_* variable of ours, the benchmark's own, and KENFOLD_EMBED=`embed`
    ("" leaves it unset: the product's default embedder)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("KENFOLD_")}
    env |= {
        "KENFOLD_HOME": str(home),
        "KENFOLD_EMBEDDED_DURABLE": "false",
        "DJANGO_SETTINGS_MODULE": "kenfold.settings",
        "KENFOLD_LOG_LEVEL": "warning",
    }
    if embed:
        env["KENFOLD_EMBED"] = embed
    return env | extra


def manage(home: Path, embed: str, *args: str, timeout: float = 600) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=kenfold_env(home, embed),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def internal(
    home: Path,
    embed: str,
    task: str,
    payload: dict[str, Any],
    *,
    timeout: float = 7200,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run one of this script's Django-side tasks (see `run_internal`) in a child process for `home`."""
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--internal", task],
        cwd=REPO,
        env=kenfold_env(home, embed, BENCH_PAYLOAD=json.dumps(payload), **(env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"internal task {task} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT_PREFIX) :])


ACCESS_LINE = re.compile(r"^POST /mcp HTTP/[\d.]+ 200 (\d+)$", re.MULTILINE)


class Server:
    """`manage.py serve` (which execs gunicorn -k asgi) in its own process group."""

    def __init__(self, home: Path, workers: int, embed: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = home / "server.log"
        env = kenfold_env(
            home,
            embed,
            KENFOLD_HTTP_ADDR=f"127.0.0.1:{self.port}",
            KENFOLD_WORKERS=str(workers),
            # Only the access-log format changes (gunicorn reads this variable): request, status and the
            # server-side duration in microseconds, to tell server time from client time.
            GUNICORN_CMD_ARGS="--access-logformat '%(r)s %(s)s %(D)s'",
        )
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve"],
            cwd=REPO,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited:\n{self.log_path.read_text()[-3000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/readyz", timeout=5).status_code == 200:
                    return
            time.sleep(0.3)
        raise RuntimeError(f"the server was not ready within {timeout} s")

    def log_offset(self) -> int:
        self._log.flush()
        return self.log_path.stat().st_size

    def mcp_durations_ms(self, offset: int) -> list[float]:
        """Server-side durations of the POST /mcp requests logged after `offset`."""
        with open(self.log_path, "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
        return [int(m.group(1)) / 1000 for m in ACCESS_LINE.finditer(text)]

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()


def stop_cluster(home: Path) -> None:
    from kenfold.embedded_db import EmbeddedCluster

    with contextlib.suppress(Exception):
        EmbeddedCluster(home=home, durable=False).stop()


# --- bulk load ------------------------------------------------------------------------------------------

COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
COPY_TRAILER = struct.pack("!h", -1)
# timestamptz in PostgreSQL's binary COPY format: microseconds since this instant.
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
MEMORY_COLUMNS = (
    "id, type, scope, content, attrs, source_agent, source_session, trust, confidence, status, "
    "supersedes_id, expires_at, created_at, updated_at"
)


def uuid7(ms: int, rng: random.Random) -> uuid.UUID:
    """A UUIDv7 for a given creation time, as PostgreSQL's uuidv7() would have made it then."""
    rand = rng.getrandbits(74)
    value = (
        (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    )
    return uuid.UUID(int=value)


def embed_bases(bases: list[Base], embed: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every configured model's vectors for the base sentences.

    Returns {model name: numpy array, one row per base}, primary model first, and each model's name,
    dimensions (of the vectors it really returned) and embedding time. The models run in a child
    process with the server's environment (KENFOLD_EMBED=`embed`), so these are the embedders the server
    will search with.
    """
    import numpy as np

    work = Path(tempfile.mkdtemp(prefix="kenfold-latency-embed-"))
    try:
        # A file, not the payload variable: a few thousand sentences exceed one environment string's limit.
        texts = work / "texts.json"
        texts.write_text(json.dumps([base.text for base in bases], ensure_ascii=False))
        out = work / "vectors.npz"
        result = internal(
            work,
            embed,
            "embed",
            {"texts": str(texts), "out": str(out)},
            # Only this one-off process uses every core; the server keeps the default thread count.
            env={"KENFOLD_EMBED_THREADS": str(min(64, os.cpu_count() or 1))},
        )
        with np.load(out) as saved:
            vectors = {model["name"]: saved[f"m{i}"] for i, model in enumerate(result["models"])}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return vectors, result["models"]


def noise_sigma(dimensions: int) -> float:
    """Noise per dimension for a model: NOISE_SIGMA at DIMS dimensions, and the same expected cosine
    between a memory's vector and its base's (~0.93) at any other dimension count."""
    return NOISE_SIGMA * math.sqrt(DIMS / dimensions)


def connect(home: Path) -> Any:
    import psycopg

    from kenfold.embedded_db import EmbeddedCluster

    conninfo = EmbeddedCluster(home=home, durable=False).superuser_conninfo("kenfold")
    return psycopg.connect(**conninfo, autocommit=True)


def bulk_load(
    home: Path, size: int, bases: list[Base], base_vectors: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """COPY `size` memories and one vector per memory and model of `base_vectors`; returns timings and
    the corpus mix."""
    import numpy as np

    rng = random.Random(SEED + size)
    nrng = np.random.default_rng(SEED + size)
    timings: dict[str, float] = {}

    with connect(home) as conn:
        indexes = conn.execute(
            """
            SELECT c.relname, pg_get_indexdef(i.indexrelid)
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid IN ('memory'::regclass, 'memory_embedding'::regclass)
              AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
            ORDER BY c.relname
            """
        ).fetchall()
        # Built once at the end instead of updated row by row: the usual bulk-load practice.
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')

    by_kind: dict[tuple[str, bool], list[int]] = {}
    for index, base in enumerate(bases):
        by_kind.setdefault((base.type, base.korean), []).append(index)
    type_names = list(TYPE_WEIGHTS)
    span_ms = 365 * 24 * 3600 * 1000
    now_ms = int(now.timestamp() * 1000)
    created = np.sort(nrng.integers(now_ms - span_ms, now_ms - 60_000, size=size))
    types = nrng.choice(len(type_names), size=size, p=list(TYPE_WEIGHTS.values()))
    korean = nrng.random(size) < KOREAN_SHARE
    weights = np.array(PROJECT_WEIGHTS) / sum(PROJECT_WEIGHTS)
    projects = nrng.choice(len(PROJECTS), size=size, p=weights)
    rolls = nrng.random((size, 4))
    pending: dict[str, list[uuid.UUID]] = {}
    counts: dict[str, int] = {}
    models = list(base_vectors)
    # The primary model's noise comes from the corpus generator, as when the benchmark knew one model
    # (its corpus is unchanged); every other model's from a generator of its own, seeded by size and name.
    noise_rngs = [nrng] + [
        np.random.default_rng([SEED + size, zlib.crc32(name.encode())]) for name in models[1:]
    ]
    # Per model, the middle of each binary tuple: the model name and the vector's header.
    middles = [
        struct.pack("!i", len(name.encode()))
        + name.encode()
        + struct.pack("!ihh", 4 + 4 * base_vectors[name].shape[1], base_vectors[name].shape[1], 0)
        for name in models
    ]

    started = time.monotonic()
    chunk = 20_000
    with contextlib.ExitStack() as stack:
        mem_conn = stack.enter_context(connect(home))
        emb_conns = [stack.enter_context(connect(home)) for _ in models]
        for conn in (mem_conn, *emb_conns):
            # Foreign-key triggers off for the load: every reference points at a row of this load.
            conn.execute("SET session_replication_role = replica")
        # A connection for the memory rows and one per model, so the server parses them in parallel.
        mem_copy = stack.enter_context(
            stack.enter_context(mem_conn.cursor()).copy(f"COPY memory ({MEMORY_COLUMNS}) FROM STDIN")
        )
        emb_copies = [
            stack.enter_context(
                stack.enter_context(conn.cursor()).copy(
                    "COPY memory_embedding (memory_id, model, embedding, content_md5, scope, status, type, "
                    "expires_at) FROM STDIN (FORMAT BINARY)"
                )
            )
            for conn in emb_conns
        ]
        for emb_copy in emb_copies:
            emb_copy.write(COPY_HEADER)
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            picks = [0] * (stop - start)
            # Each binary tuple is head + model + vector + tail; vectors are made for the chunk at once.
            heads: list[bytes] = []
            tails: list[bytes] = []
            for offset, row in enumerate(range(start, stop)):
                memory_type = type_names[types[row]]
                pool = by_kind[(memory_type, bool(korean[row]))]
                base_index = pool[rng.randrange(len(pool))]
                picks[offset] = base_index
                base = bases[base_index]
                ms = int(created[row])
                memory_id = uuid7(ms, rng)
                created_at = datetime.fromtimestamp(ms / 1000, UTC)
                content = base.text
                if rolls[row, 0] < 0.7:
                    content += fill(rng.choice(DETAILS), rng)
                scope = _scope_for(memory_type, rolls[row, 1], int(projects[row]))
                status = _status_for(memory_type, rolls[row, 2])
                attrs: dict[str, Any] = {"type_source": "agent"}
                expires_at = None
                if memory_type == "temporary":
                    if base.handoff:
                        attrs = {
                            "kind": "handoff",
                            "next_steps": [fill("{followup}", rng), fill("{followup}", rng)],
                            "type_source": "agent",
                        }
                        if rolls[row, 3] < 0.5:
                            attrs |= {"resumed_at": created_at.isoformat(), "resumed_by": "codex"}
                        expires_at = created_at + timedelta(days=7)
                    else:
                        expires_at = created_at + timedelta(seconds=rng.randint(3600, 30 * 86400))
                supersedes = None
                if status == "superseded":
                    pending.setdefault(scope, []).append(memory_id)
                elif status == "active" and pending.get(scope) and rolls[row, 3] < 0.8:
                    supersedes = pending[scope].pop()
                session = f"sess-{row:08d}" if memory_type == "episodic" else None
                trust = "user" if memory_type == "preference" and rolls[row, 3] < 0.5 else "agent"
                served = status == "active" and (expires_at is None or expires_at > now)
                key = f"{status}{'' if served or status != 'active' else ' (expired)'}"
                counts[key] = counts.get(key, 0) + 1
                mem_copy.write_row(
                    (
                        memory_id,
                        memory_type,
                        scope,
                        content,
                        json.dumps(attrs, ensure_ascii=False),
                        AGENTS[row % len(AGENTS)],
                        session,
                        trust,
                        0.5,
                        status,
                        supersedes,
                        expires_at,
                        created_at,
                        created_at,
                    )
                )
                digest = hashlib.md5(content.encode()).hexdigest().encode()
                heads.append(struct.pack("!hi", 8, 16) + memory_id.bytes)
                # The memory's filters, copied onto its vector rows (migration 0008; the copy trigger is
                # off during the load, like the foreign keys).
                tails.append(
                    struct.pack("!i", 32)
                    + digest
                    + b"".join(
                        struct.pack("!i", len(text)) + text
                        for text in (scope.encode(), status.encode(), memory_type.encode())
                    )
                    + (
                        struct.pack("!iq", 8, (expires_at - PG_EPOCH) // timedelta(microseconds=1))
                        if expires_at is not None
                        else struct.pack("!i", -1)
                    )
                )
            for name, middle, noise_rng, emb_copy in zip(
                models, middles, noise_rngs, emb_copies, strict=True
            ):
                # The model's base vector plus noise, re-normalized; pgvector's binary form is
                # big-endian float4.
                vectors = base_vectors[name]
                dims = vectors.shape[1]
                noise = noise_rng.normal(0.0, noise_sigma(dims), (len(picks), dims)).astype(np.float32)
                noisy = vectors[picks] + noise
                noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
                big_endian = noisy.astype(">f4")
                emb_copy.write(
                    b"".join(
                        head + middle + vector.tobytes() + tail
                        for head, vector, tail in zip(heads, big_endian, tails, strict=True)
                    )
                )
            elapsed = time.monotonic() - started
            print(f"  loaded {stop:>9,}/{size:,} rows ({elapsed:5.0f} s)", end="\r", flush=True)
        for emb_copy in emb_copies:
            emb_copy.write(COPY_TRAILER)
    print()
    timings["copy_s"] = time.monotonic() - started

    index_times: dict[str, float] = {}
    with connect(home) as conn:
        for name, definition in indexes:
            t0 = time.monotonic()
            conn.execute(definition)
            index_times[name] = round(time.monotonic() - t0, 2)
    timings["secondary_indexes_s"] = sum(index_times.values())
    return {
        "timings": timings,
        "index_build_s": index_times,
        "status_mix": counts,
        "recreated_indexes": [name for name, _ in indexes],
        "embedding_rows": {name: size for name in models},
    }


def _scope_for(memory_type: str, roll: float, project: int) -> str:
    user_share = {"preference": 0.9, "semantic": 0.6}.get(memory_type, 0.03)
    return "user" if roll < user_share else f"project:github.com/acme/{PROJECTS[project]}"


def _status_for(memory_type: str, roll: float) -> str:
    if memory_type == "preference":
        table = [("active", 0.70), ("proposed", 0.18), ("superseded", 0.08), ("deleted", 0.04)]
    else:
        table = [("active", 0.86), ("superseded", 0.09), ("deleted", 0.05)]
    for status, share in table:
        if roll < share:
            return status
        roll -= share
    return table[-1][0]


def database_facts(home: Path) -> dict[str, Any]:
    with connect(home) as conn:
        sizes = dict(
            conn.execute(
                """
                SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
                WHERE c.relname IN ('memory', 'memory_embedding')
                UNION ALL
                SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
                WHERE i.indrelid IN ('memory'::regclass, 'memory_embedding'::regclass)
                """
            ).fetchall()
        )
        served = conn.execute(
            "SELECT count(*) FROM memory WHERE status = 'active' AND (expires_at IS NULL OR expires_at > now())"
        ).fetchone()[0]
        scopes = conn.execute(
            "SELECT scope, count(*) FROM memory GROUP BY scope ORDER BY 2 DESC LIMIT 3"
        ).fetchall()
        settings = dict(
            conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name IN "
                "('shared_buffers', 'work_mem', 'maintenance_work_mem', 'effective_cache_size', "
                "'max_parallel_maintenance_workers', 'hnsw.ef_search', 'hnsw.iterative_scan', "
                "'hnsw.max_scan_tuples', 'jit', 'random_page_cost')"
            ).fetchall()
        )
        return {
            "database_bytes": conn.execute("SELECT pg_database_size('kenfold')").fetchone()[0],
            "relation_bytes": sizes,
            "served_memories": served,
            "largest_scopes": [[scope, count] for scope, count in scopes],
            "postgres": conn.execute("SHOW server_version").fetchone()[0],
            "pgvector": conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0],
            "settings": settings,
        }


def vacuum_analyze(home: Path) -> float:
    t0 = time.monotonic()
    with connect(home) as conn:
        conn.execute("VACUUM (ANALYZE) memory")
        conn.execute("VACUUM (ANALYZE) memory_embedding")
    return time.monotonic() - t0


# --- the MCP driver -------------------------------------------------------------------------------------


@dataclass
class Phase:
    tool: str
    clients: int
    calls: int = 0
    errors: int = 0
    elapsed_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    first_error: str | None = None

    def summary(self) -> dict[str, Any]:
        import numpy as np

        values = np.array(self.latencies_ms) if self.latencies_ms else np.array([float("nan")])
        server = np.array(self.server_ms) if self.server_ms else np.array([float("nan")])
        return {
            "tool": self.tool,
            "clients": self.clients,
            "calls": self.calls,
            "errors": self.errors,
            "elapsed_s": round(self.elapsed_s, 2),
            "p50_ms": round(float(np.percentile(values, 50)), 2),
            "p95_ms": round(float(np.percentile(values, 95)), 2),
            "p99_ms": round(float(np.percentile(values, 99)), 2),
            "max_ms": round(float(values.max()), 2),
            "mean_ms": round(float(values.mean()), 2),
            "throughput": round(self.calls / self.elapsed_s, 2) if self.elapsed_s else 0.0,
            "server_p50_ms": round(float(np.percentile(server, 50)), 2),
            "server_p95_ms": round(float(np.percentile(server, 95)), 2),
            "first_error": self.first_error,
        }


async def open_client(stack: AsyncExitStack, url: str, key: str, name: str) -> Any:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    http = await stack.enter_async_context(
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60)
    )
    return await stack.enter_async_context(
        Client(
            streamable_http_client(url, http_client=http),
            mode="auto",
            client_info=Implementation(name=name, version="1.0"),
        )
    )


async def run_phase(
    url: str,
    key: str,
    *,
    tool: str,
    arguments: list[dict[str, Any]],
    clients: int,
    duration: float,
    warm: dict[str, Any],
    server: Server | None = None,
) -> Phase:
    """`clients` sessions call `tool` with `arguments` in turn until the list or `duration` runs out."""
    phase = Phase(tool=tool, clients=clients)
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        sessions = [await open_client(stack, url, key, f"bench-{tool}-{i}") for i in range(clients)]
        # The first call of a session fetches the tool listing (for output validation): not measured.
        await asyncio.gather(*(session.call_tool("recall", warm) for session in sessions))
        issued = 0
        offset = server.log_offset() if server else 0
        start = loop.time()
        deadline = start + duration

        async def worker(session: Any) -> None:
            nonlocal issued
            while issued < len(arguments) and loop.time() < deadline:
                args = arguments[issued]
                issued += 1
                t0 = time.perf_counter()
                try:
                    if tool == "tools/list":
                        # The floor: HTTP, the API-key guard and the MCP layer, without any tool.
                        await session.list_tools(cache_mode="refresh")
                        result = None
                    else:
                        result = await session.call_tool(tool, args)
                except Exception as exc:  # a transport failure is a failed call, not the end of the run
                    phase.errors += 1
                    phase.first_error = phase.first_error or f"{type(exc).__name__}: {exc}"
                    continue
                elapsed_ms = (time.perf_counter() - t0) * 1000
                if result is not None and result.is_error:
                    phase.errors += 1
                    text = " ".join(getattr(block, "text", "") for block in result.content)
                    phase.first_error = phase.first_error or text[:300]
                else:
                    phase.calls += 1
                    phase.latencies_ms.append(elapsed_ms)

        # Hard bound on top of the soft one: a hung server cannot keep the benchmark running.
        async with asyncio.timeout(duration + 120):
            await asyncio.gather(*(worker(session) for session in sessions))
        phase.elapsed_s = loop.time() - start
        if server:
            await asyncio.sleep(0.3)  # let the workers write their last access-log lines
            phase.server_ms = server.mcp_durations_ms(offset)
    return phase


def median_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ["p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms", "throughput", "server_p50_ms", "server_p95_ms"]
    out: dict[str, Any] = {key: round(statistics.median(run[key] for run in runs), 2) for key in keys}
    out |= {
        "tool": runs[0]["tool"],
        "clients": runs[0]["clients"],
        "calls": sum(run["calls"] for run in runs),
        "errors": sum(run["errors"] for run in runs),
        "repeats": len(runs),
        "p95_ms_each": [run["p95_ms"] for run in runs],
        "throughput_each": [run["throughput"] for run in runs],
        "first_error": next((run["first_error"] for run in runs if run["first_error"]), None),
    }
    return out


async def drive(server: Server, key: str, args: argparse.Namespace, size: int) -> dict[str, Any]:
    url = f"{server.base}/mcp"
    rng = random.Random(SEED * 7 + size)
    queries = make_queries(max(args.max_calls, 200), rng)
    tasks = make_tasks(max(args.max_calls, 200), rng)
    warm = queries[0]

    # Warm-up: both gunicorn workers load the embedding model and fill their caches.
    print("  warming up")
    # Sessions are keep-alive connections that gunicorn's workers accept at random: use several.
    await run_phase(url, key, tool="recall", arguments=queries[:80], clients=6, duration=60, warm=warm)
    await run_phase(url, key, tool="get_context", arguments=tasks[:40], clients=6, duration=60, warm=warm)

    plan = [
        ("tools/list", 1),
        ("recall", 1),
        ("recall", args.clients),
        ("get_context", 1),
        ("get_context", args.clients),
    ]
    runs: dict[str, list[dict[str, Any]]] = {f"{tool}/{k}": [] for tool, k in plan}
    for repeat in range(args.repeats):
        for tool, clients in plan:
            pool = {"recall": queries, "get_context": tasks}.get(tool, [{}] * len(queries))
            # Each repeat starts elsewhere in the argument list, so repeats do not replay one another.
            shift = (repeat * 997) % len(pool)
            arguments = (pool[shift:] + pool[:shift])[: args.max_calls]
            phase = await run_phase(
                url,
                key,
                tool=tool,
                arguments=arguments,
                clients=clients,
                duration=args.duration,
                warm=warm,
                server=server,
            )
            summary = phase.summary()
            runs[f"{tool}/{clients}"].append(summary)
            print(
                f"  [{repeat + 1}/{args.repeats}] {tool:11} K={clients}: {summary['calls']:5} calls "
                f"p50 {summary['p50_ms']:7.1f}  p95 {summary['p95_ms']:7.1f}  p99 {summary['p99_ms']:7.1f} ms  "
                f"{summary['throughput']:6.1f}/s  errors {summary['errors']}"
            )

    writes: list[dict[str, Any]] = []
    for repeat in range(args.repeats):
        arguments = make_writes(args.remember_count, rng, tag=f"{size}-{repeat}")
        phase = await run_phase(
            url,
            key,
            tool="remember",
            arguments=arguments,
            clients=args.clients,
            duration=max(args.duration, 120),
            warm=warm,
            server=server,
        )
        summary = phase.summary()
        writes.append(summary)
        print(
            f"  [{repeat + 1}/{args.repeats}] remember    K={args.clients}: {summary['calls']:5} calls "
            f"p50 {summary['p50_ms']:7.1f}  p95 {summary['p95_ms']:7.1f}  p99 {summary['p99_ms']:7.1f} ms  "
            f"{summary['throughput']:6.1f}/s  errors {summary['errors']}"
        )
    phases = {name: median_summary(each) for name, each in runs.items()}
    phases[f"remember/{args.clients}"] = median_summary(writes)
    return {"phases": phases, "runs": runs | {f"remember/{args.clients}": writes}}


# --- one size -------------------------------------------------------------------------------------------


def bench_size(
    size: int, args: argparse.Namespace, bases: list[Base], base_vectors: dict[str, Any], explain: bool
) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix=f"kenfold-latency-{size}-"))
    print(f"\n== {size:,} memories (KENFOLD_HOME={home})")
    server: Server | None = None
    result: dict[str, Any] = {"size": size}
    # The loaded models, primary first; the child tasks check that they are the configured embedders.
    models = [{"name": name, "dimensions": int(vectors.shape[1])} for name, vectors in base_vectors.items()]
    try:
        t0 = time.monotonic()
        manage(home, args.embed, "migrate", "--verbosity", "0")
        key = manage(home, args.embed, "key", "create", AGENT).strip()
        result["migrate_s"] = round(time.monotonic() - t0, 1)

        now = datetime.now(UTC)
        load = bulk_load(home, size, bases, base_vectors, now)
        print(
            f"  COPY {load['timings']['copy_s']:.0f} s, secondary indexes "
            f"{load['timings']['secondary_indexes_s']:.0f} s"
        )
        build_limit = max(60.0, args.build_minutes * 60 - (time.monotonic() - t0))
        hnsw = internal(home, args.embed, "index", {"timeout_s": build_limit, "models": models})
        for name, built in hnsw["models"].items():
            state = (
                f"{built['seconds']:.0f} s"
                if built["finished"]
                else f"stopped after {built['seconds']:.0f} s"
                if built["started"]
                else "not started"
            )
            print(f"  HNSW index {name} ({built['dimensions']} dims, ensure_model_index) {state}")
        for notice in hnsw["notices"]:
            print(f"    NOTICE {notice}")
        result["load"] = load | {
            "hnsw_build_s": round(hnsw["seconds"], 1),
            "hnsw_finished": hnsw["finished"],
            # The primary model's index; every model's is in hnsw_models.
            "hnsw_index": hnsw["index"],
            "hnsw_notices": hnsw["notices"],
            "hnsw_models": {
                name: built | {"seconds": round(built["seconds"], 1)}
                for name, built in hnsw["models"].items()
            },
            "vacuum_analyze_s": 0.0,
        }
        if not hnsw["finished"]:
            result["skipped"] = (
                f"the HNSW build did not finish within the {args.build_minutes:.0f}-minute load budget "
                f"(stopped after {hnsw['seconds']:.0f} s); nothing was measured at this size"
            )
            result["database"] = database_facts(home)
            print(f"  {result['skipped']}")
            return result
        result["load"]["vacuum_analyze_s"] = round(vacuum_analyze(home), 1)
        result["database"] = database_facts(home)
        print(f"  database {result['database']['database_bytes'] / 2**20:,.0f} MiB")

        rng = random.Random(SEED * 3 + size)
        profile_queries = make_queries(60, rng)
        profile = {
            "queries": profile_queries,
            "tasks": make_tasks(45, rng),
            "writes": make_writes(45, rng, tag=f"profile-{size}"),
            "models": models,
        }
        result["stages"] = internal(home, args.embed, "profile", profile)
        print(f"  in-process stages (median ms): {result['stages']['median_ms']}")

        server = Server(home, workers=args.workers, embed=args.embed)
        server.wait_ready()
        result["drive"] = asyncio.run(drive(server, key, args, size))
        server.stop()
        server = None
        if explain:
            english = [q for q in profile_queries if not _is_korean(q["query"])][:2]
            korean = [q for q in profile_queries if _is_korean(q["query"])][:1]
            payload = {
                "queries": english + korean,
                "tasks": make_tasks(1, random.Random(SEED)),
                # A project rule: episodic and temporary writes skip the similar[] lookups.
                "writes": [
                    w | {"type": "project"}
                    for w in make_writes(1, random.Random(SEED), tag=f"explain-{size}")
                ],
            }
            result["explain"] = internal(home, args.embed, "explain", payload)
        return result
    finally:
        if server is not None:
            server.stop()
        stop_cluster(home)
        if args.keep:
            print(f"  kept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)


def _is_korean(text: str) -> bool:
    return bool(re.search(r"[\uac00-\ud7a3]", text))


# --- Django-side tasks (run in a child process with KENFOLD_HOME set) ------------------------------------


def run_internal(task: str) -> None:
    payload = json.loads(os.environ.get("BENCH_PAYLOAD", "{}"))
    if task == "embed":
        # The models only: no Django, no database.
        result = _task_embed(payload)
    else:
        import django

        django.setup()
        from django.db import connection

        result = {"index": _task_index, "profile": _task_profile, "explain": _task_explain}[task](
            connection, payload
        )
    print(RESULT_PREFIX + json.dumps(result, default=str))


def _check_models(expected: list[dict[str, Any]]) -> list[Any]:
    """The configured embedders, after checking that they are the models whose vectors were loaded."""
    from memories import providers

    embedders = providers.embedders()
    configured = [embedder.name for embedder in embedders]
    loaded = [model["name"] for model in expected]
    if configured != loaded:
        raise RuntimeError(f"the configured embedders {configured} are not the loaded models {loaded}")
    return embedders


def _task_embed(payload: dict[str, Any]) -> dict[str, Any]:
    """Every configured embedder's vectors for the texts in payload["texts"], saved to payload["out"]."""
    import numpy as np

    from memories import providers

    texts = json.loads(Path(payload["texts"]).read_text())
    models: list[dict[str, Any]] = []
    arrays: dict[str, Any] = {}
    for index, embedder in enumerate(providers.embedders()):
        t0 = time.monotonic()  # includes loading the model
        vectors = np.asarray(embedder.embed(texts, timeout=3600), dtype=np.float32)
        models.append(
            {
                "name": embedder.name,
                "class": type(embedder).__name__,
                "dimensions": int(vectors.shape[1]),
                "embed_s": round(time.monotonic() - t0, 1),
            }
        )
        arrays[f"m{index}"] = vectors
    if not models:
        raise RuntimeError("no embedder is configured: the benchmark measures vector search too")
    np.savez(payload["out"], **arrays)
    return {"models": models}


def _task_index(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Build every loaded model's HNSW index, in order, within payload["timeout_s"] for all of them."""
    from django.db import OperationalError

    from memories.embedding_store import _index_name, ensure_model_index

    _check_models(payload["models"])
    connection.ensure_connection()
    notices: list[str] = []
    connection.connection.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    deadline = time.monotonic() + payload["timeout_s"]
    built: dict[str, dict[str, Any]] = {}
    stopped = False
    for model in payload["models"]:
        name, dimensions = model["name"], model["dimensions"]
        entry: dict[str, Any] = {
            "dimensions": dimensions,
            "index": _index_name(name, dimensions),
            "seconds": 0.0,
            "started": False,
            "finished": False,
            "notices": [],
        }
        built[name] = entry
        left = deadline - time.monotonic()
        if stopped or left <= 1:
            continue  # the budget is spent: this model's index is not built
        # The benchmark's own session only: a build that would not finish in the time left is abandoned.
        with connection.cursor() as cursor:
            cursor.execute(f"SET statement_timeout = {int(left * 1000)}")
        first = len(notices)
        entry["started"] = True
        t0 = time.monotonic()
        try:
            ensure_model_index(model=name, dimensions=dimensions)
            entry["finished"] = True
        except OperationalError as exc:
            if "statement timeout" not in str(exc):
                raise
            stopped = True
        entry["seconds"] = time.monotonic() - t0
        entry["notices"] = notices[first:]
    several = len(built) > 1
    primary = payload["models"][0]
    return {
        "seconds": sum(entry["seconds"] for entry in built.values()),
        "finished": all(entry["finished"] for entry in built.values()),
        "notices": [
            f"{name}: {notice}" if several else notice
            for name, entry in built.items()
            for notice in entry["notices"]
        ],
        "index": _index_name(primary["name"], primary["dimensions"]),
        "models": built,
    }


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }


def _task_profile(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Where the time goes without HTTP: embedding, each ranker's SQL, and each tool's whole service call.

    `embed` and `vector_sql` are the sums over the configured models, one after another (recall runs
    them beside each other and beside the lexical search); with several models, `embed[<model>]` and
    `vector_sql[<model>]` are each model's own. `recall_total` is the whole pipeline, as served.
    """
    from kenfold import clock
    from kenfold.caller import Caller
    from memories import search
    from memories.selectors import context_get, memory_recall, read_scopes
    from memories.services import memory_remember

    embedders = _check_models(payload["models"])
    queries = payload["queries"]
    stages: dict[str, list[float]] = {"embed": [], "lexical_sql": [], "vector_sql": [], "recall_total": []}
    if len(embedders) > 1:
        for embedder in embedders:
            stages[f"embed[{embedder.name}]"] = []
            stages[f"vector_sql[{embedder.name}]"] = []
    hits: list[int] = []
    caller = Caller(agent=AGENT)
    for round_ in range(2):  # the first round warms the models and the caches and is not recorded
        for item in queries:
            scopes = read_scopes(item["project"])
            now = clock.now()
            embed_ms: dict[str, float] = {}
            vector_ms: dict[str, float] = {}
            vectors: dict[str, list[float]] = {}
            for embedder in embedders:
                t0 = time.perf_counter()
                vectors[embedder.name] = embedder.embed([item["query"]], timeout=10)[0]
                embed_ms[embedder.name] = (time.perf_counter() - t0) * 1000
            t1 = time.perf_counter()
            lexical = search.lexical_search(query=item["query"], scopes=scopes, types=None, now=now, limit=50)
            lexical_ms = (time.perf_counter() - t1) * 1000
            for embedder in embedders:
                t2 = time.perf_counter()
                search.vector_search(
                    vector=vectors[embedder.name],
                    model=embedder.name,
                    scopes=scopes,
                    types=None,
                    now=now,
                    limit=50,
                    max_distance=2.0,
                )
                vector_ms[embedder.name] = (time.perf_counter() - t2) * 1000
            t3 = time.perf_counter()
            memory_recall(caller=caller, query=item["query"], project=item["project"])
            recall_ms = (time.perf_counter() - t3) * 1000
            if round_:
                stages["embed"].append(sum(embed_ms.values()))
                stages["lexical_sql"].append(lexical_ms)
                stages["vector_sql"].append(sum(vector_ms.values()))
                stages["recall_total"].append(recall_ms)
                if len(embedders) > 1:
                    for name in vectors:
                        stages[f"embed[{name}]"].append(embed_ms[name])
                        stages[f"vector_sql[{name}]"].append(vector_ms[name])
                hits.append(len(lexical))
    for name, function, items in (
        ("get_context_total", context_get, payload["tasks"]),
        ("remember_total", memory_remember, payload["writes"]),
    ):
        stages[name] = []
        for index, item in enumerate(items):
            t0 = time.perf_counter()
            function(caller=caller, **item)
            if index >= 5:  # the first calls warm up
                stages[name].append((time.perf_counter() - t0) * 1000)
    # Django closes the connection at the end of every request: without a pool the next request gets a
    # new PostgreSQL backend, with empty catalog caches and no text-search dictionary loaded; with one,
    # a pooled backend. The same recall calls after connection.close() show what a request pays for it.
    stages["connect"], stages["recall_fresh_connection"] = [], []
    for item in queries:
        connection.close()
        t0 = time.perf_counter()
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        t1 = time.perf_counter()
        connection.close()
        t2 = time.perf_counter()
        memory_recall(caller=caller, query=item["query"], project=item["project"])
        t3 = time.perf_counter()
        stages["connect"].append((t1 - t0) * 1000)
        stages["recall_fresh_connection"].append((t3 - t2) * 1000)
    return {
        "median_ms": {name: _percentiles(values)["p50"] for name, values in stages.items()},
        "p95_ms": {name: _percentiles(values)["p95"] for name, values in stages.items()},
        "queries": len(queries),
        "lexical_hits_median": statistics.median(hits),
        "models": [embedder.name for embedder in embedders],
    }


def _task_explain(connection: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) of the SQL that recall and get_context really send."""
    from django.db import transaction
    from django.test.utils import CaptureQueriesContext

    from kenfold.caller import Caller
    from memories.selectors import context_get, memory_recall
    from memories.services import memory_remember

    caller = Caller(agent=AGENT)
    calls: list[tuple[str, Callable[..., object], dict[str, Any]]] = [
        *((f"recall {q['query']!r}", memory_recall, q) for q in payload["queries"]),
        *((f"get_context {t['task']!r}", context_get, t) for t in payload["tasks"]),
        *((f"remember {w['content']!r}", memory_remember, w) for w in payload["writes"]),
    ]
    out = []
    for label, function, arguments in calls:
        if function is memory_remember:
            # Warm with another text: a second identical remember would only find the duplicate.
            function(caller=caller, **(arguments | {"content": arguments["content"] + " (warm-up)"}))
        else:
            function(caller=caller, **arguments)
        with CaptureQueriesContext(connection) as captured:
            function(caller=caller, **arguments)
        for entry in captured.captured_queries:
            sql = entry["sql"]
            # Reads only: EXPLAIN ANALYZE executes the statement, and a write would run twice.
            if not sql.lstrip().upper().startswith(("SELECT", "WITH")) or "memory" not in sql:
                continue
            # The server's connections already scan HNSW iteratively (kenfold.settings); so does this one.
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
                plan = [row[0] for row in cursor.fetchall()]
            out.append({"call": label, "sql": sql, "client_ms": float(entry["time"]) * 1000, "plan": plan})
    return {"statements": out}


# --- reporting ------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with contextlib.suppress(OSError, IndexError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    # Read-only git queries: which code was measured, and whether tracked files differed from it.
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False
    ).stdout.strip()
    modified = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split("\n")
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": round(mem_kib / 2**20, 1),
        "python": platform.python_version(),
        "commit": commit or "unknown (not a git checkout)",
        # Product code only: the benchmark's own files and the docs it writes are not what is measured.
        "modified": [
            line[3:] for line in modified if line.strip() and not line[3:].startswith(("docs/", "bench/"))
        ],
        "date": subprocess.run(["date", "-u"], capture_output=True, text=True, check=False).stdout.strip(),
    }


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| memories | call | clients | p50 ms | p95 ms | p99 ms | calls/s | server p50 / p95 ms | calls | errors "
        "| p95 of each repeat |"
    )
    rows = [head, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for result in results:
        if "drive" not in result:
            continue
        for phase in result["drive"]["phases"].values():
            rows.append(
                f"| {result['size']:,} | {phase['tool']} | {phase['clients']} | {phase['p50_ms']:.1f} | "
                f"{phase['p95_ms']:.1f} | {phase['p99_ms']:.1f} | {phase['throughput']:.1f} | "
                f"{phase['server_p50_ms']:.1f} / {phase['server_p95_ms']:.1f} | {phase['calls']} | "
                f"{phase['errors']} | {', '.join(f'{v:.1f}' for v in phase['p95_ms_each'])} |"
            )
    return "\n".join(rows)


def load_table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| memories | served | COPY s | other indexes s | HNSW build s | VACUUM ANALYZE s | database MiB | HNSW MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        load, db = result["load"], result["database"]
        # Reports written before several models were measured have no hnsw_models.
        per_model = load.get("hnsw_models") or {}
        if len(per_model) > 1:
            # One figure per model, in the order of the embedders (docs: the corpus paragraph).
            build = " + ".join(
                f"{'' if m['finished'] else '> '}{m['seconds']:.0f}" if m["started"] else "-"
                for m in per_model.values()
            )
            size_mib = " + ".join(
                f"{db['relation_bytes'].get(m['index'], 0) / 2**20:,.0f}" for m in per_model.values()
            )
        else:
            build = f"{'' if load['hnsw_finished'] else '> '}{load['hnsw_build_s']:.0f}"
            size_mib = f"{db['relation_bytes'].get(load['hnsw_index'], 0) / 2**20:,.0f}"
        rows.append(
            f"| {result['size']:,} | {db['served_memories']:,} | {load['timings']['copy_s']:.0f} | "
            f"{load['timings']['secondary_indexes_s']:.0f} | {build} | "
            f"{load['vacuum_analyze_s']:.0f} | {db['database_bytes'] / 2**20:,.0f} | {size_mib} |"
        )
    return "\n".join(rows)


def stage_table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| memories | query embedding | lexical SQL | vector SQL | recall | get_context | remember "
        "| connection after close() | recall after close() | lexical hits (of 50) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = (
        "embed",
        "lexical_sql",
        "vector_sql",
        "recall_total",
        "get_context_total",
        "remember_total",
        "connect",
        "recall_fresh_connection",
    )
    for result in results:
        if "stages" not in result:
            continue
        med, p95 = result["stages"]["median_ms"], result["stages"]["p95_ms"]
        # Reports written before a column existed show a dash there.
        cells = [f"{med[k]:.1f} / {p95[k]:.1f}" if k in med else "-" for k in names]
        rows.append(
            f"| {result['size']:,} | {' | '.join(cells)} | {result['stages']['lexical_hits_median']:.0f} |"
        )
    return "\n".join(rows)


def target_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for result in results:
        if "skipped" in result:
            lines.append(f"- {result['size']:,} memories: not measured: {result['skipped']}.")
            continue
        target = TARGETS_MS.get(result["size"])
        if target is None:
            continue
        single = result["drive"]["phases"]["recall/1"]["p95_ms"]
        verdict = "met" if single <= target else "MISSED"
        lines.append(
            f"- {result['size']:,} memories: recall p95 (1 client) {single:.1f} ms against the ≤ {target:.0f} ms "
            f"target: **{verdict}**."
        )
    return lines


def embed_summary(report: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """How the docs name the measured embedders: the KENFOLD_EMBED setting, the models' names, the models.
    Reports written before --embed existed measured MiniLM alone with the variable unset."""
    embed = report.get("embed") or {}
    mode = embed.get("mode")
    models = embed.get("models") or [{"name": MODEL_NAME, "dimensions": DIMS}]
    setting = f"KENFOLD_EMBED={mode}" if mode else "KENFOLD_EMBED unset, the product default"
    names = " + ".join(f"{model['name']} ({model['dimensions']} dims)" for model in models)
    return setting, names, models


def docs_section(report: dict[str, Any]) -> str:
    m = report["machine"]
    results = report["results"]
    sizes = ", ".join(f"{r['size']:,}" for r in results)
    a = report["args"]
    first = results[0]["database"] if results else {}
    setting, names, models = embed_summary(report)
    model_count = len(models)
    several = model_count > 1
    lines = [
        DOCS_HEADING,
        "",
        f"Measured by `bench/latency.py` on {m['date']}; code: {report['commit']}"
        + (f" with uncommitted changes to {', '.join(m['modified'])}." if m["modified"] else "."),
        "",
        f"    {report['command']}",
        "",
        f"Machine: {m['nproc']} cores ({m['cpu']}), {m['ram_gib']} GiB RAM, shared with other engineers' test "
        "runs while measuring (figures are medians of the repeats; compare sizes within one run). "
        f"PostgreSQL {first.get('postgres', '?')} (embedded), pgvector {first.get('pgvector', '?')}, "
        "default settings of the embedded cluster "
        f"(shared_buffers {first.get('settings', {}).get('shared_buffers', '?')}, maintenance_work_mem "
        f"{first.get('settings', {}).get('maintenance_work_mem', '?')}), KENFOLD_EMBEDDED_DURABLE=false "
        "(fsync off: it speeds up the load and the remember phase, not reads).",
        "",
        f"Sizes: {sizes} memories. Server: `manage.py serve` (gunicorn -k asgi, {a['workers']} workers), "
        f"with {setting}: embedder{'s' if several else ''} {names}, no reranker. "
        "`tools/list` (uncached) is the floor under every call: HTTP, "
        "the API-key check and the MCP layer, no tool. Client: the MCP SDK's `Client` over HTTP (mode auto), one "
        f"session per simulated agent, on the same machine. Each read phase ran {a['duration']} s or "
        f"{a['max_calls']} calls, {a['repeats']} times, interleaved; remember wrote {a['remember_count']} "
        f"distinct memories per repeat with {a['clients']} clients. Latency is per call, client-side "
        "(HTTP + MCP + query embedding" + (" of every model" if several else "") + " + SQL).",
        "",
        "Corpus: synthetic, bulk-loaded with COPY (see the script's docstring): 20 projects of Zipf-like "
        "sizes plus the user scope, all six types, ~85% active (others superseded, deleted, proposed, or "
        "temporary and mostly expired), ~20% Korean, created over a year. "
        + (
            f"With {setting}, each memory has one vector per model ({model_count}: {names}). Vectors "
            "are derived: each real model embeds a few thousand template sentences and each memory gets, "
            "per model, its template's "
            f"vector plus Gaussian noise (sigma {NOISE_SIGMA}/dimension at {DIMS} dimensions, scaled by "
            f"sqrt({DIMS}/dimensions) for the others: the same ~0.93 cosine to the template), re-normalized. "
            if several
            else f"Vectors are derived: the real model, {names}, embeds a few thousand "
            "template sentences and each memory gets its template's vector plus Gaussian noise "
            f"(sigma {noise_sigma(models[0]['dimensions']):.3g}/dimension), re-normalized. "
        )
        + "Queries are template questions over the same vocabulary, 20% Korean, always with a project.",
        "",
        "### Targets",
        "",
        *(target_lines(results) or ["- No measured size has a target (targets are for 100k and 1M)."]),
        "",
        "### Latency through the MCP endpoint",
        "",
        table(results),
        "",
        "### Where the time goes (in process, no HTTP; median / p95 ms)",
        "",
        *(
            [
                f"Query embedding and vector SQL are sums over the {model_count} models, one after another "
                "(recall runs them side by side); each model's own figures are in the JSON report "
                "(`embed[<model>]`, `vector_sql[<model>]`).",
                "",
            ]
            if several
            else []
        ),
        stage_table(results),
        "",
        "### Load and index build",
        "",
        *([f"HNSW build time and size are per model, in the order {names}.", ""] if several else []),
        load_table(results),
        "",
    ]
    notices = [
        f"- {r['size']:,}: {notice}"
        for r in results
        for notice in r.get("load", {}).get("hnsw_notices", [])
        if notice
    ]
    if notices:
        lines += ["PostgreSQL notices while building the HNSW index:", "", *notices, ""]
    if report.get("notes"):
        lines += ["### Notes", "", *[f"- {note}" for note in report["notes"]], ""]
    return "\n".join(lines)


def update_docs(path: Path, section: str) -> None:
    """Replace (or append) the latency section; every other section stays as it is."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == DOCS_HEADING), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        before = "\n".join(lines[:start]).rstrip("\n")
        after = "\n".join(lines[end:])
        new = (
            (before + "\n\n" if before else "")
            + section.rstrip("\n")
            + "\n"
            + ("\n" + after if after else "")
        )
        new = new.rstrip("\n") + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)


def explain_digest(explain: dict[str, Any]) -> list[str]:
    """The lines that matter in each plan: scans, index names, row counts, and the timing."""
    keep = re.compile(r"Scan|Execution Time|Planning Time|Buffers: shared|Rows Removed|Sort Method|Limit")
    out = []
    for statement in explain["statements"]:
        sql, plan = statement["sql"], statement["plan"]
        kind = (
            "vector"
            if "<=>" in sql
            else "lexical"
            if "ts_rank" in sql
            else "trigram"
            if "similarity(" in sql
            else "other"
        )
        out.append(f"-- {statement['call']} [{kind}]")
        if kind == "other":
            # ORM reads (sections, in_bulk, code refs): the top node and the time are enough.
            out += [f"   {plan[0].strip()}", *(f"   {line}" for line in plan if "Execution Time" in line)]
        else:
            out += [f"   {line.strip()}" for line in plan if keep.search(line)][:24]
    return out


# --- main -----------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--clients", type=int, default=4, help="concurrent MCP clients (K)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per read phase")
    parser.add_argument("--max-calls", type=int, default=5000, help="calls per read phase at most")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of every phase")
    parser.add_argument("--remember-count", type=int, default=300, help="remember calls per repeat")
    parser.add_argument("--bases", type=int, default=4000, help="distinct template sentences embedded")
    parser.add_argument("--workers", type=int, default=2, help="KENFOLD_WORKERS (the default is 2)")
    parser.add_argument(
        "--embed",
        metavar="MODE",
        default=os.environ.get("KENFOLD_EMBED", "").strip(),
        help=(
            f"KENFOLD_EMBED for every process started here: {', '.join(EMBED_MODES)}, or '' for unset "
            "(the product's default, both local models); default: this environment's KENFOLD_EMBED"
        ),
    )
    parser.add_argument(
        "--build-minutes",
        type=float,
        default=40.0,
        help="time budget for load + index build per size; a size whose HNSW build exceeds it is skipped",
    )
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--no-docs", action="store_true", help="do not touch docs/benchmarks.md")
    parser.add_argument(
        "--explain-out", type=Path, help="EXPLAIN output of the largest size (default: beside --json)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the KENFOLD_HOMEs (stopped) for inspection")
    parser.add_argument(
        "--note", action="append", default=[], help="a bullet for the Notes of the docs section"
    )
    parser.add_argument(
        "--render", type=Path, help="only rewrite the docs section from a saved --json report (with --note)"
    )
    parser.add_argument(
        "--commit", help="how the docs name the measured code (default: the checkout's commit)"
    )
    parser.add_argument("--internal", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> None:
    args = parse_args()
    if args.internal:
        run_internal(args.internal)
        return
    if args.render:
        saved = json.loads(args.render.read_text())
        saved["notes"] = args.note or saved.get("notes", [])
        print(
            "\n".join(
                [table(saved["results"]), "", stage_table(saved["results"]), "", load_table(saved["results"])]
            )
        )
        update_docs(args.docs, docs_section(saved))
        print(f"\nupdated the '{DOCS_HEADING[3:]}' section of {args.docs}")
        return
    args.embed = args.embed.strip()
    if args.embed and args.embed not in EMBED_MODES:
        # Checked here, not by argparse's choices: the default comes from the environment.
        raise SystemExit(
            f"--embed (or KENFOLD_EMBED) is {args.embed!r}: use one of {', '.join(EMBED_MODES)}, or '' for the "
            "product's default; the benchmark needs the local models' vectors"
        )
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop servers and clusters.
    signal.signal(signal.SIGTERM, _interrupt)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    command = " ".join(shlex.quote(part) for part in [".venv/bin/python", "bench/latency.py", *sys.argv[1:]])
    if args.embed and not any(part == "--embed" or part.startswith("--embed=") for part in sys.argv[1:]):
        # Taken from the environment: the command shown must say so to be repeatable.
        command = f"KENFOLD_EMBED={args.embed} {command}"
    host = machine()
    report: dict[str, Any] = {
        "command": command,
        "machine": host,
        "commit": args.commit or f"commit {host['commit']}",
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "internal"},
        "notes": args.note,
        "results": [],
    }
    print(f"{command}\n{report['machine']}")

    t0 = time.monotonic()
    bases = make_bases(args.bases, random.Random(SEED))
    base_vectors, models = embed_bases(bases, args.embed)
    report["bases"] = {"count": len(bases), "embed_s": round(time.monotonic() - t0, 1)}
    report["embed"] = {
        "mode": args.embed or None,
        "models": [model | {"noise_sigma": round(noise_sigma(model["dimensions"]), 5)} for model in models],
    }
    setting, names, _ = embed_summary(report)
    print(
        f"{setting}: embedded {len(bases)} base sentences with {names} in {report['bases']['embed_s']} s "
        f"({', '.join(f'{model["name"]} {model["embed_s"]} s' for model in models)})"
    )

    for size in sizes:
        result = bench_size(size, args, bases, base_vectors, explain=size == max(sizes))
        report["results"].append(result)
        if "explain" in result:
            out = args.explain_out or (
                args.json.with_suffix(".explain.txt")
                if args.json
                else REPO / "bench" / "out" / "latency.explain.txt"
            )
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(
                "\n\n".join(
                    f"-- {s['call']}\n{s['sql']}\n\n" + "\n".join(s["plan"])
                    for s in result["explain"]["statements"]
                )
                + "\n"
            )
            print(f"\nEXPLAIN (ANALYZE, BUFFERS) at {size:,} (full plans in {out}):")
            print("\n".join(explain_digest(result["explain"])))
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2, default=str, ensure_ascii=False))

    print("\n" + table(report["results"]))
    print("\n" + stage_table(report["results"]))
    print("\n" + load_table(report["results"]))
    for line in target_lines(report["results"]):
        print(line)
    if not args.no_docs:
        update_docs(args.docs, docs_section(report))
        print(f"\nupdated the '{DOCS_HEADING[3:]}' section of {args.docs}")


if __name__ == "__main__":
    main()
