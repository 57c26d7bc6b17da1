"""Categories from URLs: rules of a host pattern and an optional path pattern, most specific first."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from urllib.parse import urlsplit

from common.categories import UNKNOWN_CATEGORY
from stages.ingest.config import IngestConfig


@dataclass(frozen=True)
class UrlRule:
    """``host[/path]`` -> category; ``*.example.com`` also matches ``example.com``; ``www.`` is ignored."""

    host: str
    path: str | None
    category: str

    @classmethod
    def parse(cls, pattern: str, category: str) -> UrlRule:
        """A rule from its config form, e.g. ``"*.wikipedia.org"`` or ``"www.debian.org/doc/*"``."""
        host, _, path = pattern.strip().lower().partition("/")
        return cls(host.removeprefix("www."), f"/{path}" if path else None, category)

    def matches(self, host: str, path: str) -> bool:
        """Whether a URL's (lowercased, ``www.``-less) host and its path fall under this rule."""
        host_ok = fnmatch.fnmatchcase(host, self.host) or (
            self.host.startswith("*.") and host == self.host[2:])
        return host_ok and (self.path is None or fnmatch.fnmatchcase(path, self.path))

    @property
    def specificity(self) -> tuple[int, int, int]:
        """Rules with a path before host-only rules, then exact hosts before wildcards, then longer patterns."""
        return (self.path is not None, "*" not in self.host, len(self.host) + len(self.path or ""))


class UrlCategories:
    """The configured URL rules; a rule mapping to ``unknown`` switches a shipped default off.

    Rules are indexed by host (exact hosts, and ``*.domain`` under its domain), so a lookup tries the
    URL's host and its parent domains instead of every rule; other glob forms are tried one by one.
    """

    @classmethod
    def from_config(cls, cfg: IngestConfig) -> UrlCategories:
        """The shipped rules (``ingest.default_url_categories``) with the user's (``ingest.url_categories``)
        layered on top: a user pattern replaces the shipped rule of the same pattern."""
        return cls({**cfg.default_url_categories, **cfg.url_categories})

    def __init__(self, mapping: dict[str, str]):
        rules = sorted((UrlRule.parse(p, c) for p, c in mapping.items()), key=lambda r: r.specificity, reverse=True)
        self.by_host: dict[str, list[UrlRule]] = {}
        self.other: list[UrlRule] = []
        for rule in rules:
            key = rule.host[2:] if rule.host.startswith("*.") else rule.host
            if any(c in key for c in "*?["):
                self.other.append(rule)
            else:
                self.by_host.setdefault(key, []).append(rule)

    def category(self, url: str | None) -> str:
        """The category of the most specific rule matching ``url``, or ``unknown``."""
        if not url or not (self.by_host or self.other):
            return UNKNOWN_CATEGORY
        try:
            parts = urlsplit(url.strip())
            host = (parts.hostname or "").removeprefix("www.")
        except ValueError:
            return UNKNOWN_CATEGORY
        if not host:
            return UNKNOWN_CATEGORY
        path = parts.path or "/"
        labels = host.split(".")
        candidates = [rule for i in range(len(labels)) for rule in self.by_host.get(".".join(labels[i:]), ())]
        candidates = sorted(candidates + self.other, key=lambda r: r.specificity, reverse=True)
        return next((rule.category for rule in candidates if rule.matches(host, path)), UNKNOWN_CATEGORY)
