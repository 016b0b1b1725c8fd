"""Extraction of file and symbol references from memory text (spec 1.9, server-side extraction)."""

import time

import pytest

from coderefs.extract import ExtractedRef, extract_refs, refs_for_memory
from kenfold_common.coderefs import (
    CODE_EXTENSIONS,
    DATA_EXTENSIONS,
    is_code_file,
    is_valid_ref_path,
    is_valid_ref_symbol,
)


def refs(text: str) -> list[tuple[str, str]]:
    return [(ref.path, ref.symbol) for ref in extract_refs(text)]


# --- the spec's reference cases -------------------------------------------------------------------


def test_backticked_symbol_with_one_file_is_tied_to_it_after_the_file_ref():
    # File-level refs come first, then symbols; the symbol is mentioned first but depends on the file.
    assert extract_refs("`RequireAPIKey` in internal/auth/middleware.go hashes the token") == [
        ExtractedRef("internal/auth/middleware.go", ""),
        ExtractedRef("internal/auth/middleware.go", "RequireAPIKey"),
    ]


def test_korean_particle_ends_a_path():
    assert refs("설정은 config/app.yaml에 있다") == [("config/app.yaml", "")]


def test_korean_text_around_backticked_symbol_and_path():
    assert refs("`RequireAPIKey`는 internal/auth/middleware.go에서 토큰을 해시한다") == [
        ("internal/auth/middleware.go", ""),
        ("internal/auth/middleware.go", "RequireAPIKey"),
    ]


def test_two_files_keep_only_explicit_symbols_and_leave_them_pathless():
    text = "`Dedupe` is called from internal/a.go and internal/b.go; mergeRows and merge_rows help"
    assert refs(text) == [("internal/a.go", ""), ("internal/b.go", ""), ("", "Dedupe")]


@pytest.mark.parametrize(
    "mention",
    [
        "server/file.py:12",
        "server/file.py:12:3",
        "server/file.py#L10",
        "server/file.py#L10-L20",
        "server/file.py:12.",
        "./server/file.py",
        "./server/file.py:7,",
    ],
)
def test_line_suffixes_and_leading_dot_slash_are_removed(mention):
    assert refs(f"the bug is at {mention} in the loop") == [("server/file.py", "")]


@pytest.mark.parametrize(
    "path",
    [
        ".golangci.yml",
        ".github/workflows/ci.yml",
        "Makefile",
        "docker/Dockerfile",
        "Justfile",
        "Gemfile",
        "Rakefile",
        "Procfile",
        "app/[id]/page.tsx",
        "@scope/pkg/index.ts",
        "src/routes/+page.svelte",
        "scripts/next.config.js",
        "README.md",
    ],
)
def test_dotfiles_special_names_and_framework_paths_are_files(path):
    assert refs(f"see {path}.") == [(path, "")]


def test_qualified_symbols_with_one_file():
    text = "Server.Dedupe in internal/server/dedupe.go calls store.flush_batch() and Store.Put()."
    assert refs(text) == [
        ("internal/server/dedupe.go", ""),
        ("internal/server/dedupe.go", "Server.Dedupe"),
        ("internal/server/dedupe.go", "store.flush_batch"),
        ("internal/server/dedupe.go", "Store.Put"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "docs at https://example.com/docs/guide.md and http://x.org/a.py",
        "import github.com/acme/kenfold/internal/auth/middleware.go",
        "edit /etc/nginx/nginx.conf or ~/.config/app.yaml",
        "release v1.2.3 replaced 1.10.2",
        "secrets live in .env",
        "hosted on example.com",
        "everything under internal/auth/ and src/.",
        "Intl.NumberFormat formats numbers",
        "../outside/repo.py is not ours",
        "plain prose with no code at all",
        "",
    ],
)
def test_not_references(text):
    assert refs(text) == []


def test_all_caps_env_var_is_not_a_weak_symbol():
    assert refs("Set DATABASE_URL and API_KEY in config/app.yaml") == [("config/app.yaml", "")]


def test_at_most_six_paths_then_symbols_are_pathless():
    paths = [f"pkg/f{i}.go" for i in range(8)]
    text = "`Handler` touches " + ", ".join(paths)
    assert refs(text) == [(path, "") for path in paths[:6]] + [("", "Handler")]


def test_at_most_six_symbols_in_order_of_first_mention():
    names = [f"Sym{i}" for i in range(8)]
    text = " ".join(f"`{name}`" for name in names)
    assert refs(text) == [("", name) for name in names[:6]]


def test_explicit_symbols_win_the_six_slots_over_guesses():
    weak = " ".join(f"weakName{i}" for i in range(6))
    text = f"api/server.go has {weak} and finally `Explicit`"
    result = refs(text)
    assert len(result) == 7
    assert ("api/server.go", "Explicit") in result
    # Still listed in order of first mention: the explicit one was mentioned last.
    assert result[-1] == ("api/server.go", "Explicit")
    assert result[1] == ("api/server.go", "weakName0")


def test_product_names_are_not_files():
    assert refs("We use Next.js, node.js, socket.io and Chart.js here") == []


def test_product_name_inside_a_directory_is_a_file():
    assert refs("see web/next.js") == [("web/next.js", "")]


def test_stopwords_are_not_symbols():
    text = "`self` `None` `ctx` `main()` `GitHub` `iPhone` init() in app/models.py; JavaScript and macOS"
    assert refs(text) == [("app/models.py", "")]


def test_symbol_that_is_part_of_a_mentioned_path_is_dropped():
    text = "`auth` and `middleware` are in internal/auth/middleware.go; `Other` too"
    assert refs(text) == [("internal/auth/middleware.go", ""), ("internal/auth/middleware.go", "Other")]


def test_backticked_file_name_is_a_path_not_a_symbol():
    assert refs("edit `main.go` and `cmd/tool.go`") == [("main.go", ""), ("cmd/tool.go", "")]


# --- memory gating ----------------------------------------------------------------------------------

TEXT = "`RequireAPIKey` in internal/auth/middleware.go"


@pytest.mark.parametrize("memory_type", ["project", "codebase", "semantic"])
@pytest.mark.parametrize("scope", ["project:github.com/acme/kenfold", "repo:acme/kenfold"])
def test_refs_for_memory_extracts_for_project_knowledge_in_repo_scopes(memory_type, scope):
    assert refs_for_memory(memory_type=memory_type, scope=scope, content=TEXT) == extract_refs(TEXT)
    assert extract_refs(TEXT) != []


@pytest.mark.parametrize(
    ("memory_type", "scope"),
    [
        ("episodic", "project:github.com/acme/kenfold"),
        ("preference", "project:github.com/acme/kenfold"),
        ("temporary", "repo:acme/kenfold"),
        ("handoff", "project:github.com/acme/kenfold"),
        ("project", "user"),
        ("semantic", "user:alice"),
        ("codebase", ""),
    ],
)
def test_refs_for_memory_is_empty_elsewhere(memory_type, scope):
    assert refs_for_memory(memory_type=memory_type, scope=scope, content=TEXT) == []


# --- our own cases --------------------------------------------------------------------------------


def test_windows_path_splits_on_backslashes_leaving_the_base_name():
    # A backslash is a token separator, so only the last component survives as a (root-level) path.
    assert refs(r"see C:\src\kenfold\internal\auth\middleware.go") == [("middleware.go", "")]


def test_snake_case_and_camel_case_weak_symbols_with_one_file():
    text = "memories/services.py: memory_remember calls retireSuperseded, not plain words or MAX_LEN."
    assert refs(text) == [
        ("memories/services.py", ""),
        ("memories/services.py", "memory_remember"),
        ("memories/services.py", "retireSuperseded"),
    ]


def test_weak_symbols_are_ignored_without_a_file():
    assert refs("memory_remember calls retireSuperseded") == []


def test_double_colon_and_hash_qualified_symbols():
    text = "`pkg::Type::method` and `Class#method()` matter"
    assert refs(text) == [("", "pkg::Type::method"), ("", "Class#method")]


def test_call_syntax_rules():
    text = "call do_work() then a.b.c.d() and $jq() and x.handle() and 9lives() and obj.Server.Run()"
    assert refs(text) == [("", "do_work"), ("", "x.handle"), ("", "obj.Server.Run")]


def test_tail_of_double_colon_or_hash_name_is_not_a_call():
    # Without backticks the qualified name is not captured, and its bare tail is too vague to look up.
    assert refs("then Type::method() and Class#method() run") == []


def test_call_with_arguments_is_not_call_syntax():
    assert refs("the function (see below) is load(config)") == []


def test_backticks_too_long_or_spanning_lines_are_ignored():
    long_name = "A" * 121
    assert refs(f"`{long_name}` and `Real` and `Split\nAcross` lines") == [("", "Real")]


def test_backticked_non_identifiers_are_ignored():
    assert refs("run `make test` or `go vet ./...` or `x` or `foo(bar)` or `a.b.c.d`") == []


def test_symbol_mentioned_twice_is_kept_once_at_first_mention():
    text = "`Alpha` then `Beta` then Alpha() again"
    assert refs(text) == [("", "Alpha"), ("", "Beta")]


def test_duplicate_paths_are_kept_once():
    assert refs("a/b.py, a/b.py:3 and ./a/b.py") == [("a/b.py", "")]


def test_refs_stay_within_storage_limits():
    text = " ".join(f"p{i}/f.go `Name{i}` call{i}()" for i in range(50))
    result = extract_refs(text)
    assert len(result) == 12
    assert all(len(ref.path) <= 300 and len(ref.symbol) <= 100 for ref in result)


# --- validators for REST input ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "valid"),
    [
        ("internal/auth/middleware.go", True),
        (".golangci.yml", True),
        ("Makefile", True),
        ("a/" * 150 + "b.go", False),  # over 300 characters
        ("a/" * 148 + "b.go", True),
        ("/abs/file.go", False),
        ("~/file.go", False),
        ("#file.go", False),
        ("file.go:12", False),
        ("a//b.go", False),
        ("a/./b.go", False),
        ("a/../b.go", False),
        ("a b/c.go", False),
        ("github.com/x/y.go", False),
        ("next.js", False),
        (".env", False),
        ("notes.txt", False),
        ("", False),
        ("src/Main.JAVA", True),
    ],
)
def test_is_valid_ref_path(path, valid):
    assert is_valid_ref_path(path) is valid


@pytest.mark.parametrize(
    ("symbol", "valid"),
    [
        ("RequireAPIKey", True),
        ("Server.Dedupe", True),
        ("pkg::Type::method", True),
        ("Class#method", True),
        ("Server.Dedupe()", True),  # the spec's identifier shape allows a trailing ()
        ("a.b.c", True),
        ("a.b.c.d", False),
        ("9lives", False),
        ("with space", False),
        ("", False),
        ("x" * 100, True),
        ("x" * 101, False),
    ],
)
def test_is_valid_ref_symbol(symbol, valid):
    assert is_valid_ref_symbol(symbol) is valid


def test_code_files_exclude_data_formats():
    assert DATA_EXTENSIONS < CODE_EXTENSIONS
    assert is_code_file("internal/auth/middleware.go")
    assert is_code_file("lib/x.PY")
    assert not is_code_file("config/app.yaml")
    assert not is_code_file("README.md")
    assert not is_code_file("Makefile")
    assert not is_code_file(".env")


# --- linear time ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "a" * 8000,
        "a." * 4000,
        "a_" * 4000,
        "`" * 8000,
        "`a\n" * 2000,
        "`" + "a" * 7999,
        "a(" * 4000,
        "a()" * 2666,
        ".a" * 4000 + "()",
        "a/" * 4000,
        ":1" * 4000,
        "#L1-L" * 1600,
        "x.go:" + "1" * 7995,
        "a.b/" * 2000,
        "aB_c " * 1600,
        "one/file.go " + "aB_c.dE " * 900,
        " ".join(f"p{i}/f.go `N{i}`" for i in range(700)),
        "[" * 8000,
    ],
)
def test_adversarial_8000_character_input_is_fast(text):
    started = time.perf_counter()
    extract_refs(text[:8000])
    assert time.perf_counter() - started < 0.5
