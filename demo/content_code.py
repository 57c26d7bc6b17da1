"""Code snippets for tech docs: complete, runnable examples and unfinished stubs."""

from __future__ import annotations

import random
import re

from demo.content_fill import items

LANG_NAMES = ("Python", "JavaScript", "Go", "Rust", "Java", "C")

FENCES = {"Python": "python", "JavaScript": "javascript", "Go": "go", "Rust": "rust", "Java": "java", "C": "c"}

WORDS = items("""
    cache, parser, queue, worker, buffer, token, session, request, handler, router, plugin, client,
    server, socket, stream, batch, schema, query, cursor, snapshot, backup, metric, counter, timer,
    widget, endpoint, proxy, gateway, adapter, loader, encoder, decoder, validator, formatter,
    renderer, tokenizer, registry, manifest, bundle, volume, cluster, replica, shard, hook, payload,
    header, invoice, sensor, reading, sample, user, account, ticket, report, task, job, message,
    upload, asset, image, layer, frame, tile, route, shipment, product, customer, review, note,
    comment, tag, score, photo, lesson, order, station, device, playlist, recipe, booking
""")

_PROJECT_HEAD = items("""
    nimbus, quartz, falcon, ember, cobalt, pine, orbit, atlas, lumen, vertex, delta, onyx, sable,
    birch, tundra, zephyr, coral, granite, maple, nova, pixel, raven, cedar, harbor, summit, pebble,
    ripple, lotus, amber, comet, echo, fable, glacier, hollow, ivy, juniper, kestrel, lark, meadow
""")
_PROJECT_TAIL = items("db, kit, flow, hub, lab, sync, stack, forge, base, grid, mesh, line, core, cast, port")

INSTALL = {
    "Python": "pip install @proj@",
    "JavaScript": "npm install @proj@",
    "Go": "go get example.com/@proj@",
    "Rust": "cargo add @proj@",
    "Java": "mvn install -pl @proj@ -am",
    "C": "make && sudo make install",
}

COMPLETE: dict[str, tuple[str, ...]] = {
    "Python": (
        '''def @a@_moving_average(values, window):
    """Return the moving averages of values over window items."""
    if window <= 0:
        raise ValueError("window must be positive")
    result = []
    total = 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        if i >= window - 1:
            result.append(total / window)
    return result
print(@a@_moving_average([@n1@, @n2@, @n3@, @n2@, @n1@], 2))''',
        '''def parse_@a@_line(line):
    name, sep, value = line.partition("=")
    name = name.strip()
    if not sep or not name:
        raise ValueError(f"bad @a@ line: {line!r}")
    return name, value.strip()
settings = dict(parse_@a@_line(row) for row in ["@b@_limit = @n2@", "mode = fast"])
print(settings)''',
        '''from collections import OrderedDict
class @A@Cache:
    def __init__(self, limit=@n2@):
        self.limit = limit
        self.items = OrderedDict()
    def get(self, key, default=None):
        if key not in self.items:
            return default
        self.items.move_to_end(key)
        return self.items[key]
    def put(self, key, value):
        self.items[key] = value
        self.items.move_to_end(key)
        if len(self.items) > self.limit:
            self.items.popitem(last=False)''',
        '''import json
from pathlib import Path
def load_@a@_settings(path):
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data.setdefault("@b@_limit", @n2@)
    data.setdefault("retries", @n1@)
    return data''',
        '''from @proj@ import @A@Client
client = @A@Client(timeout=@n2@)
for item in client.list_@b@_items(limit=@n1@):
    print(item.name, item.size)
client.close()''',
        '''def dedupe_@a@_items(items, key=None):
    seen = set()
    unique = []
    for item in items:
        marker = key(item) if key else item
        if marker not in seen:
            seen.add(marker)
            unique.append(item)
    return unique''',
        '''import argparse
def main():
    parser = argparse.ArgumentParser(description="Inspect @a@ files.")
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--limit", type=int, default=@n2@)
    args = parser.parse_args()
    for path in args.paths[: args.limit]:
        print(path)
if __name__ == "__main__":
    main()''',
    ),
    "JavaScript": (
        '''export function debounce@A@(callback, delayMs = @n3@) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => callback(...args), delayMs);
  };
}''',
        '''async function fetch@A@List(baseUrl, page = 1) {
  const response = await fetch(`${baseUrl}/@a@s?page=${page}`);
  if (!response.ok) {
    throw new Error(`request failed with status ${response.status}`);
  }
  return response.json();
}''',
        '''const @a@Counts = new Map();
export function count@A@(name) {
  const next = (@a@Counts.get(name) ?? 0) + 1;
  @a@Counts.set(name, next);
  return next;
}''',
        '''function chunk@A@List(items, size = @n1@) {
  const chunks = [];
  for (let i = 0; i < items.length; i += size) {
    chunks.push(items.slice(i, i + size));
  }
  return chunks;
}
console.log(chunk@A@List([1, 2, 3, 4, 5], 2));''',
        '''export class @A@Queue {
  constructor(limit = @n2@) {
    this.limit = limit;
    this.items = [];
  }
  push(item) {
    if (this.items.length >= this.limit) {
      this.items.shift();
    }
    this.items.push(item);
  }
  get size() {
    return this.items.length;
  }
}''',
    ),
    "Go": (
        '''package @a@
import (
	"errors"
	"strings"
)
var ErrEmpty@A@ = errors.New("empty @a@ name")
func Normalize@A@(name string) (string, error) {
	name = strings.TrimSpace(strings.ToLower(name))
	if name == "" {
		return "", ErrEmpty@A@
	}
	return name, nil
}''',
        '''package main
import "fmt"
func sum@A@Sizes(sizes []int64) int64 {
	var total int64
	for _, size := range sizes {
		total += size
	}
	return total
}
func main() {
	fmt.Println(sum@A@Sizes([]int64{@n1@, @n2@, @n3@}))
}''',
        '''package @a@
import "sync"
type @A@Store struct {
	mu    sync.Mutex
	items map[string]string
}
func New@A@Store() *@A@Store {
	return &@A@Store{items: make(map[string]string)}
}
func (s *@A@Store) Set(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items[key] = value
}''',
        '''package main
import (
	"bufio"
	"fmt"
	"os"
)
func main() {
	scanner := bufio.NewScanner(os.Stdin)
	count := 0
	for scanner.Scan() {
		if len(scanner.Text()) > @n2@ {
			count++
		}
	}
	fmt.Printf("long @a@ lines: %d\\n", count)
}''',
        '''package @a@
import "time"
func Retry(attempts int, delay time.Duration, fn func() error) error {
	var err error
	for i := 0; i < attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
		time.Sleep(delay)
	}
	return err
}''',
    ),
    "Rust": (
        '''use std::collections::HashMap;
pub fn count_@a@_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        *counts.entry(word.to_lowercase()).or_insert(0) += 1;
    }
    counts
}''',
        '''#[derive(Debug, Clone)]
pub struct @A@Config {
    pub name: String,
    pub retries: u32,
}
impl @A@Config {
    pub fn new(name: &str) -> Self {
        Self { name: name.to_string(), retries: @n1@ }
    }
}''',
        '''pub fn parse_@a@_pairs(input: &str) -> Vec<(String, i64)> {
    input
        .lines()
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            Some((key.trim().to_string(), value.trim().parse().ok()?))
        })
        .collect()
}''',
        '''fn main() {
    let @a@_sizes: Vec<u32> = vec![@n1@, @n2@, @n3@];
    let total: u32 = @a@_sizes.iter().sum();
    let largest = @a@_sizes.iter().max().copied().unwrap_or(0);
    println!("total {} largest {}", total, largest);
}''',
        '''use std::fs;
use std::io;
pub fn read_@a@_lines(path: &str) -> io::Result<Vec<String>> {
    let text = fs::read_to_string(path)?;
    Ok(text.lines().map(str::to_owned).collect())
}''',
    ),
    "Java": (
        '''import java.util.ArrayList;
import java.util.List;
public final class @A@Batcher {
    private final int size;
    public @A@Batcher(int size) {
        this.size = size;
    }
    public <T> List<List<T>> split(List<T> items) {
        List<List<T>> batches = new ArrayList<>();
        for (int i = 0; i < items.size(); i += size) {
            batches.add(items.subList(i, Math.min(i + size, items.size())));
        }
        return batches;
    }
}''',
        '''import java.util.Map;
import java.util.TreeMap;
public final class @A@Stats {
    private final Map<String, Integer> counts = new TreeMap<>();
    public void add(String @b@) {
        counts.merge(@b@, 1, Integer::sum);
    }
    public int get(String @b@) {
        return counts.getOrDefault(@b@, 0);
    }
}''',
        '''import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
public final class @A@Lookup {
    private final Map<String, String> values = new HashMap<>();
    public void put(String key, String value) {
        values.put(key, value);
    }
    public Optional<String> find(String key) {
        return Optional.ofNullable(values.get(key));
    }
}''',
        '''public final class @A@Main {
    public static void main(String[] args) {
        int total = 0;
        for (String arg : args) {
            total += arg.length();
        }
        System.out.println("@a@ characters: " + total);
    }
}''',
    ),
    "C": (
        '''#include <stddef.h>
size_t count_@a@_matches(const int *values, size_t len, int target) {
    size_t count = 0;
    for (size_t i = 0; i < len; i++) {
        if (values[i] == target) {
            count++;
        }
    }
    return count;
}''',
        '''#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    size_t longest = 0;
    for (int i = 1; i < argc; i++) {
        size_t len = strlen(argv[i]);
        if (len > longest) {
            longest = len;
        }
    }
    printf("longest @a@ name: %zu\\n", longest);
    return 0;
}''',
        '''#include <stdlib.h>
#include <string.h>
char *copy_@a@_name(const char *name) {
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        return NULL;
    }
    memcpy(copy, name, len + 1);
    return copy;
}''',
        '''#include <stdio.h>
int main(void) {
    int @a@_values[] = {@n1@, @n2@, @n3@};
    int sum = 0;
    for (size_t i = 0; i < sizeof @a@_values / sizeof @a@_values[0]; i++) {
        sum += @a@_values[i];
    }
    printf("sum: %d\\n", sum);
    return 0;
}''',
    ),
}

EXTRAS: tuple[tuple[str, str], ...] = (
    ("sql", '''SELECT @a@_id, COUNT(*) AS total
FROM @b@_log
WHERE status = 'done'
GROUP BY @a@_id
HAVING COUNT(*) > @n1@
ORDER BY total DESC;'''),
    ("bash", '''#!/usr/bin/env bash
set -euo pipefail
for file in data/*.json; do
  echo "checking ${file}"
  @proj@ verify --@b@ "${file}"
done'''),
    ("toml", '''[@a@]
workers = @n1@
queue_size = @n2@
log_level = "info"'''),
    ("yaml", '''@a@:
  batch_size: @n2@
  retry_limit: @n1@
  output_format: jsonl
  @b@_dir: ./data/@b@'''),
)

STUBS: dict[str, tuple[str, ...]] = {
    "Python": (
        "def load_@a@(path):\n    pass  # TODO",
        "def validate_@a@(data):\n    raise NotImplementedError",
        "def save_@b@(value, path):\n    # TODO: implement this function\n    pass",
        "def merge_@a@_@b@(left, right):\n    ...",
        "class @A@Manager:\n    def start(self):\n        pass  # TODO\n    def stop(self):\n        raise NotImplementedError",
        "def compute_@b@_score(items):\n    # TODO: implement this function\n    return None",
    ),
    "JavaScript": (
        "function parse@A@(input) {\n  // TODO: implement this function\n}",
        "function render@B@(node) {\n}",
        'export function sync@A@() {\n  throw new Error("not implemented");\n}',
        "export async function load@B@(id) {\n  // TODO\n}",
        "class @A@Store {\n  get(key) {\n    // TODO: implement this function\n  }\n  set(key, value) {\n  }\n}",
    ),
    "Go": (
        "func Load@A@(path string) error {\n\t// TODO: implement this function\n\treturn nil\n}",
        "func Save@B@() {\n}",
        'func (s *@A@Store) Get(key string) (string, error) {\n\tpanic("not implemented")\n}',
        "func Validate@B@(v any) bool {\n\t// TODO\n\treturn false\n}",
    ),
    "Rust": (
        "pub fn parse_@a@(input: &str) -> Option<u32> {\n    todo!()\n}",
        "pub fn write_@b@() {\n    unimplemented!()\n}",
        "impl @A@Config {\n    pub fn validate(&self) -> bool {\n        // TODO: implement this function\n        true\n    }\n}",
    ),
    "Java": (
        "public void start@A@() {\n    // TODO: implement this function\n}",
        "public int count@B@Items() {\n    return 0; // TODO\n}",
        'public String format@A@(Object value) {\n    throw new UnsupportedOperationException("TODO");\n}',
        "public interface @B@Repository {\n    // TODO: add methods\n}",
    ),
    "C": (
        "int init_@a@(void) {\n    /* TODO: implement this function */\n    return 0;\n}",
        "void free_@b@(void) {\n}",
        "size_t count_@a@_items(const char *path) {\n    // TODO\n    return 0;\n}",
    ),
}


_RENAMES = {
    "items": ("items", "records", "entries", "elements", "members"),
    "total": ("total", "acc", "running", "grand"),
    "count": ("count", "hits", "tally", "seen_count"),
    "name": ("name", "label", "title", "ident"),
}
_RENAME_RE = re.compile(r"\b(" + "|".join(_RENAMES) + r")\b")


def _render(rng: random.Random, code: str, project: str) -> str:
    a, b = rng.sample(WORDS, 2)
    values = {
        "@a@": a, "@b@": b, "@A@": a.capitalize(), "@B@": b.capitalize(), "@proj@": project,
        "@n1@": str(rng.randint(2, 9)), "@n2@": str(rng.randint(10, 99)), "@n3@": str(rng.randint(100, 999)),
    }
    for key, value in values.items():
        code = code.replace(key, value)
    renames = {word: rng.choice(choices) for word, choices in _RENAMES.items()}
    return _RENAME_RE.sub(lambda m: renames[m.group()], code)


def project_name(rng: random.Random) -> str:
    """A made-up package name such as "quartzflow"."""
    return rng.choice(_PROJECT_HEAD) + rng.choice(_PROJECT_TAIL)


def install_command(lang_name: str, project: str) -> str:
    """Shell command that installs the project for a language."""
    return INSTALL[lang_name].replace("@proj@", project)


def complete_snippets(rng: random.Random, lang_name: str, project: str, count: int) -> list[tuple[str, str]]:
    """Up to count distinct complete examples, mostly in the doc's language: (fence, code) pairs."""
    pool = [(FENCES[lang_name], code) for code in COMPLETE[lang_name]] + list(rng.sample(EXTRAS, 1))
    chosen = rng.sample(pool, min(count, len(pool)))
    return [(fence, _render(rng, code, project)) for fence, code in chosen]


def stub_snippet(rng: random.Random, lang_name: str, project: str) -> tuple[str, str]:
    """Several unfinished functions in one block: (fence, code)."""
    chosen = rng.sample(STUBS[lang_name], min(len(STUBS[lang_name]), rng.randint(3, 4)))
    return FENCES[lang_name], "\n".join(_render(rng, code, project) for code in chosen)
