"""The synthetic corpus: vocabulary, templates, and the memories, queries, tasks and writes made from them."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

SEED = 20261130


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


def is_korean(text: str) -> bool:
    return bool(re.search(r"[\uac00-\ud7a3]", text))
