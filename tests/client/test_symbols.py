"""The definition finder and its hash, on real source in each of the 15 languages the client parses.

For every language: the symbol is found and hashed; changing its definition (a renamed parameter) changes
the hash; reformatting whitespace does not; changing another symbol does not.
"""

import re
from dataclasses import dataclass

import pytest

from kenfold_client.symbols import (
    MAX_FILE_BYTES,
    ParseFailed,
    UnsupportedFile,
    grammar_for_path,
    parse_file,
    symbol_hash,
)


@dataclass(frozen=True)
class Sample:
    path: str
    source: str
    symbol: str
    rename: tuple[str, str]  # renames a parameter of the symbol's definition, everywhere in the file
    other_change: tuple[str, str]  # edits another symbol's definition


SAMPLES = [
    Sample(
        "store/server.py",
        """\
class Server:
    def dedupe(self, items):
        seen = set()
        return [item for item in items if not (item in seen or seen.add(item))]


def helper(value):
    return value + 1
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "store/server.go",
        """\
package store

type Server struct{ limit int }

func (s *Server) Dedupe(items []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, item := range items {
		if !seen[item] {
			seen[item] = true
			out = append(out, item)
		}
	}
	return out
}

func Helper(value int) int {
	return value + 1
}
""",
        "Dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/server.ts",
        """\
export class Server {
  dedupe(items: string[]): string[] {
    return [...new Set(items)];
  }
}

export function helper(value: number): number {
  return value + 1;
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/List.tsx",
        """\
export function List(props: { items: string[] }) {
  return <ul>{props.items.map((item) => <li key={item}>{item}</li>)}</ul>;
}

export function Badge(value: number) {
  return <b>{value + 1}</b>;
}
""",
        "List",
        ("props", "properties"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "lib/server.js",
        """\
class Server {
  dedupe(items) {
    return [...new Set(items)];
  }
}

function helper(value) {
  return value + 1;
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/server.rs",
        """\
pub struct Server;

impl Server {
    pub fn dedupe(&self, items: Vec<String>) -> Vec<String> {
        let mut out = Vec::new();
        for item in items {
            if !out.contains(&item) {
                out.push(item);
            }
        }
        out
    }
}

pub fn helper(value: i32) -> i32 {
    value + 1
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/Server.java",
        """\
import java.util.*;

public class Server {
    public List<String> dedupe(List<String> items) {
        return new ArrayList<>(new LinkedHashSet<>(items));
    }

    static int helper(int value) {
        return value + 1;
    }
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/Server.kt",
        """\
class Server {
    fun dedupe(items: List<String>): List<String> {
        return items.distinct()
    }
}

fun helper(value: Int): Int {
    return value + 1
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "lib/server.rb",
        """\
class Server
  def dedupe(items)
    items.uniq
  end
end

def helper(value)
  value + 1
end
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/Server.cs",
        """\
using System.Collections.Generic;
using System.Linq;

namespace App
{
    public class Server
    {
        public List<string> Dedupe(List<string> items)
        {
            return items.Distinct().ToList();
        }

        public static int Helper(int value)
        {
            return value + 1;
        }
    }
}
""",
        "Dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/Server.php",
        """\
<?php

class Server
{
    public function dedupe(array $items): array
    {
        return array_values(array_unique($items));
    }
}

function helper(int $value): int
{
    return $value + 1;
}
""",
        "dedupe",
        ("items", "entries"),
        ("$value + 1", "$value + 2"),
    ),
    Sample(
        "src/dedupe.c",
        """\
#include <string.h>

int dedupe(const char **items, int count) {
    int out = 0;
    for (int i = 0; i < count; i++) {
        if (out == 0 || strcmp(items[out - 1], items[i]) != 0) {
            items[out++] = items[i];
        }
    }
    return out;
}

int helper(int value) {
    return value + 1;
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/server.cpp",
        """\
#include <string>
#include <vector>

namespace store {
class Server {
public:
    std::vector<std::string> dedupe(const std::vector<std::string>& items);
};
}

std::vector<std::string> store::Server::dedupe(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        if (out.empty() || out.back() != item) out.push_back(item);
    }
    return out;
}

int helper(int value) { return value + 1; }
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "Sources/Server.swift",
        """\
class Server {
    func dedupe(items: [String]) -> [String] {
        var seen = Set<String>()
        return items.filter { seen.insert($0).inserted }
    }
}

func helper(value: Int) -> Int {
    return value + 1
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "src/Server.scala",
        """\
class Server {
  def dedupe(items: List[String]): List[String] = items.distinct
}

object Helpers {
  def helper(value: Int): Int = value + 1
}
""",
        "dedupe",
        ("items", "entries"),
        ("value + 1", "value + 2"),
    ),
    Sample(
        "scripts/dedupe.sh",
        """\
#!/usr/bin/env bash

dedupe() {
    local items="$1"
    printf '%s\\n' $items | sort -u
}

helper() {
    echo $(( $1 + 1 ))
}
""",
        "dedupe",
        ("items", "entries"),
        ("$1 + 1", "$1 + 2"),
    ),
]
SAMPLE_IDS = [grammar_for_path(sample.path) or sample.path for sample in SAMPLES]


def definitions(path: str, source: str, symbol: str) -> list[bytes]:
    parsed = parse_file(path=path, source=source.encode())
    assert not parsed.tree.root_node.has_error, f"the sample {path} must be valid code"
    return parsed.definitions(symbol)


def hash_of(path: str, source: str, symbol: str) -> str:
    return symbol_hash([(path, definitions(path, source, symbol))])


def reformatted(source: str) -> str:
    """The same code with every run of whitespace made longer: indentation, spacing and blank lines."""
    return source.replace(" ", "  ").replace("\n", "\n\n").replace("\t", "\t\t")


def test_the_samples_cover_every_grammar_the_client_ships():
    shipped = {"python", "go", "typescript", "tsx", "javascript", "rust", "java", "kotlin", "ruby", "c_sharp"}
    shipped |= {"php", "c", "cpp", "swift", "scala", "bash"}
    assert sorted(SAMPLE_IDS) == sorted(shipped)


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_symbol_is_found_and_hashed(sample: Sample):
    found = definitions(sample.path, sample.source, sample.symbol)
    assert found, f"no definition of {sample.symbol} in {sample.path}"
    assert all(re.search(rb"\b" + sample.symbol.encode() + rb"\b", text) for text in found)
    # Only the definition: the other function of the sample is not part of it.
    assert not any(sample.other_change[0].encode() in text for text in found)
    assert re.fullmatch(r"sym:[0-9a-f]{32}", hash_of(sample.path, sample.source, sample.symbol))


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_changing_the_definition_changes_the_hash(sample: Sample):
    changed = sample.source.replace(*sample.rename)
    assert changed != sample.source
    assert hash_of(sample.path, changed, sample.symbol) != hash_of(sample.path, sample.source, sample.symbol)


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_reformatting_whitespace_keeps_the_hash(sample: Sample):
    reformatted_source = reformatted(sample.source)
    assert definitions(sample.path, reformatted_source, sample.symbol) != definitions(
        sample.path, sample.source, sample.symbol
    )
    assert hash_of(sample.path, reformatted_source, sample.symbol) == hash_of(
        sample.path, sample.source, sample.symbol
    )


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_changing_another_symbol_keeps_the_hash(sample: Sample):
    changed = sample.source.replace(*sample.other_change)
    assert changed != sample.source
    assert hash_of(sample.path, changed, sample.symbol) == hash_of(sample.path, sample.source, sample.symbol)


def test_hash_covers_the_path_and_each_definition_with_whitespace_collapsed():
    import hashlib

    expected = hashlib.sha256(b"a.py\0def f(x): return x\0b.py\0g = 1\0").hexdigest()[:32]
    assert symbol_hash([("a.py", [b"def f(x):\n    return x"]), ("b.py", [b"g  =\t1"])]) == f"sym:{expected}"


# --- qualified symbols ---------------------------------------------------------------------------------

GO_SERVER = """\
package store

type Server struct{}
type Client struct{}

func (s *Server) Dedupe(items []string) []string { return items }

func (c Client) Dedupe(items []string) []string { return nil }

func Dedupe(items []string) []string { return items }
"""


def test_go_receiver_qualifies_a_method():
    found = definitions("store.go", GO_SERVER, "Server.Dedupe")
    assert found == [b"func (s *Server) Dedupe(items []string) []string { return items }"]
    assert definitions("store.go", GO_SERVER, "Client.Dedupe") == [
        b"func (c Client) Dedupe(items []string) []string { return nil }"
    ]
    assert len(definitions("store.go", GO_SERVER, "Dedupe")) == 3
    assert definitions("store.go", GO_SERVER, "Cache.Dedupe") == []


PYTHON_CLASSES = """\
class Server:
    def dedupe(self, items):
        return list(dict.fromkeys(items))


class Client:
    def dedupe(self, items):
        return items
"""


def test_python_class_qualifies_a_method():
    assert definitions("a.py", PYTHON_CLASSES, "Server.dedupe") == [
        b"def dedupe(self, items):\n        return list(dict.fromkeys(items))"
    ]
    assert definitions("a.py", PYTHON_CLASSES, "Client.dedupe") == [
        b"def dedupe(self, items):\n        return items"
    ]
    assert definitions("a.py", PYTHON_CLASSES, "Other.dedupe") == []


RUBY_CLASSES = """\
module Store
  class Server
    def dedupe(items)
      items.uniq
    end

    def self.build(options)
      new
    end
  end
end

class Client
  def dedupe(items)
    items
  end
end
"""


def test_ruby_class_qualifies_instance_and_class_methods():
    assert definitions("a.rb", RUBY_CLASSES, "Server#dedupe") == [
        b"def dedupe(items)\n      items.uniq\n    end"
    ]
    assert definitions("a.rb", RUBY_CLASSES, "Store::Server#dedupe") == definitions(
        "a.rb", RUBY_CLASSES, "Server#dedupe"
    )
    assert definitions("a.rb", RUBY_CLASSES, "Server.build") == [
        b"def self.build(options)\n      new\n    end"
    ]
    assert definitions("a.rb", RUBY_CLASSES, "Client#dedupe") == [b"def dedupe(items)\n    items\n  end"]


CPP_NAMESPACES = """\
namespace store {
class Server {
public:
    int dedupe(int items);
};
}

namespace cache {
class Server {
public:
    int dedupe(int items) { return 0; }
};
}

int store::Server::dedupe(int items) { return items; }
"""


def test_cpp_namespace_and_class_qualify_declarations_and_out_of_class_definitions():
    assert definitions("a.cpp", CPP_NAMESPACES, "store::Server::dedupe") == [
        b"int dedupe(int items);",
        b"int store::Server::dedupe(int items) { return items; }",
    ]
    assert definitions("a.cpp", CPP_NAMESPACES, "cache::Server::dedupe") == [
        b"int dedupe(int items) { return 0; }"
    ]
    assert len(definitions("a.cpp", CPP_NAMESPACES, "Server::dedupe")) == 3
    assert definitions("a.cpp", CPP_NAMESPACES, "other::Server::dedupe") == []


def test_rust_impl_type_qualifies_a_method():
    source = "struct Store;\nimpl<T> Store {\n    fn get(&self) -> u8 { 1 }\n}\nfn get() -> u8 { 2 }\n"
    assert definitions("a.rs", source, "Store::get") == [b"fn get(&self) -> u8 { 1 }"]
    assert definitions("a.rs", source, "Store.get") == [b"fn get(&self) -> u8 { 1 }"]


# --- uses are not definitions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "source", "symbol", "expected"),
    [
        (
            "a.py",
            "import dedupe\nfrom x import dedupe as d\n\ndef run(dedupe=None):\n    dedupe(1)\n    run(dedupe=2)\n"
            "    total = 0\n    total += 1\n\ndedupe = make()\n",
            "dedupe",
            [b"dedupe = make()"],
        ),
        ("a.py", "total = 0\ntotal += 1\n", "total", [b"total = 0"]),
        (
            "a.ts",
            'import { dedupe } from "./x";\nexport { dedupe };\nconst s: Store<number> = dedupe();\n'
            "class Store<T> {}\n",
            "Store",
            [b"class Store<T> {}"],
        ),
        (
            "a.c",
            "struct point { int x; };\nstruct point origin;\nint norm(struct point p);\n",
            "point",
            [b"struct point { int x; }"],
        ),
        ("a.sh", "dedupe() { sort -u; }\ndedupe\necho dedupe\n", "dedupe", [b"dedupe() { sort -u; }"]),
        ("a.go", "package a\nfunc A() { B(); x := S{B: 1}; _ = x }\n", "B", []),
    ],
    ids=["python", "python-augmented", "typescript", "c-struct-uses", "bash-calls", "go-call-and-key"],
)
def test_uses_of_a_name_are_not_definitions(path: str, source: str, symbol: str, expected: list[bytes]):
    assert definitions(path, source, symbol) == expected


# --- limits -------------------------------------------------------------------------------------------------


def test_files_without_a_grammar_or_over_1_mib_are_unsupported():
    assert grammar_for_path("init.lua") is None
    with pytest.raises(UnsupportedFile):
        parse_file(path="init.lua", source=b"function dedupe() end")
    with pytest.raises(UnsupportedFile):
        parse_file(path="big.py", source=b"#" * (MAX_FILE_BYTES + 1))
    assert grammar_for_path("include/api.h") == "cpp"
    assert grammar_for_path(".py") is None


def test_a_parse_that_runs_out_of_time_fails():
    source = b"def f(x):\n    return [x for x in range(10)]\n" * 20_000
    with pytest.raises(ParseFailed):
        parse_file(path="big.py", source=source, timeout=0)
    assert parse_file(path="big.py", source=source).tree.root_node.child_count == 20_000


def test_not_found_in_a_file_with_syntax_errors_is_a_parse_failure_not_an_absence():
    parsed = parse_file(
        path="a.py", source=b"def helper(:\n    pass\n\ndef dedupe(items):\n    return items\n"
    )
    assert parsed.definitions("dedupe") == [b"def dedupe(items):\n    return items"]
    with pytest.raises(ParseFailed):
        parsed.definitions("missing")
