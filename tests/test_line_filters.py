"""Line filters of the clean stage: ad, contact and promotion lines out of kept documents, nothing else."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

from common.config import load_config
from common.schema import DOC_SCHEMA, category_array
from stages.clean.batch_text import BatchText
from stages.clean.lines import filter_lines
from stages.clean.repeated_lines import repeated_lines
from stages.clean.spam import SpamScan, spam_matcher
from stages.clean.stage import AD_LINE, REMOVED_LINES, REPEATED_LINE, TOO_SHORT_AFTER_LINES, clean_batch
from tests import repeated_lines_reference as reference

CFG = load_config().clean
SPAM = spam_matcher(tuple(CFG.spam_patterns))

EN_PROSE = (
    "The river rose slowly through the night, and by morning the lower fields were under water. Farmers moved "
    "their animals to the hill pastures and waited for the rain to stop.\n\n"
    "By noon the water had begun to fall again. The council met in the school hall and agreed to repair the old "
    "embankment before the spring floods, paying for the work from the road budget.\n\n"
    "Older residents said the same thing had happened forty years before, when the embankment was first built, "
    "and that the repairs then had lasted a generation.")
ZH_PROSE = (
    "连日降雨使河水上涨，低洼的农田一夜之间被淹。农民们把牲畜赶到山坡上的草场，等待雨停。\n\n"
    "中午过后，水位开始回落。村委会在学校礼堂开会，决定在春汛之前修好旧堤，费用从修路经费中支出。\n\n"
    "村里的老人说，四十年前修堤时也发生过同样的事，那次修好的堤坝用了整整一代人。")


def _lines(text: str) -> list[str]:
    return filter_lines([text], SPAM, CFG.line_filters)[0].removed


@pytest.mark.parametrize("prose,ads", [
    (EN_PROSE, ["Flash sale: 40% off every order until Sunday!", "Call 0800 555 0199 now"]),
    (EN_PROSE, ["Earn bonus credits when you sign up today.\nMessage us on WhatsApp: +44 7700 900123"]),
    (ZH_PROSE, ["限时特价，全场五折包邮！\n订购热线：13912345678"]),
    (ZH_PROSE, ["关注公众号，免费领取全套复习资料。", "客服微信：abc12345"]),
    (ZH_PROSE, ["客服VX：kf4344（长按复制）"]),  # a Latin handle name right after Han characters
    # Prices and amounts in every form the fast scan marks: 满 before a digit, a numeral before 折, a currency code
    # after a digit, fullwidth digits.
    (ZH_PROSE, ["店庆满199减50，欢迎来电", "全场七折，咨询电话：０２１ ５５５５ ０１９９"]),
    (EN_PROSE, ["Tickets from 25usd, book today!"]),
])
def test_ad_paragraphs_inside_prose_are_removed_and_the_prose_is_kept(prose, ads):
    paragraphs = prose.split("\n\n")
    text = "\n\n".join([paragraphs[0], ads[0], *paragraphs[1:2], *ads[1:], *paragraphs[2:]])
    verdict = filter_lines([text], SPAM, CFG.line_filters)[0]
    assert verdict.removed == [line for ad in ads for line in ad.split("\n")]
    assert verdict.text == prose
    assert verdict.ad_share < CFG.line_filters.max_ad_share


@pytest.mark.parametrize("line", [
    "See https://www.postgresql.org/download/ for the latest release of the server.",  # a link in a manual
    "url = 'http://www.example.com/cgi-bin/register.cgi'",  # code
    "   maja    0501-1136285",  # a table of numbers in a man page
    "Debian is 100% free software.",  # "free" alone
    "市场上粮油货源充足，价格稳定。",  # a spam pattern alone, in a news report
    "It implies a by-the-book mentality; see also the entry on bureaucracy.",
    "Return a list of source lines and the starting line number for an object.",
    "The tour costs $15 for members; tickets can be bought at the door.",  # a price, no call
    "Add the gluten-free flour and stir until smooth.",  # a call, and "free" only in a compound
    "0.41440500499993504 0.3955516149999312",
])
def test_ordinary_lines_of_every_genre_stay(line):
    assert _lines(f"{EN_PROSE}\n\n{line}\n\n{ZH_PROSE}") == []


def _batch(texts: list[str], sources: list[str] | None = None, metas: list[str] | None = None) -> pa.RecordBatch:
    n = len(texts)
    return pa.RecordBatch.from_arrays(
        [pa.array(range(n), pa.int64()), pa.array([f"s{i}" for i in range(n)]), pa.array(texts, pa.large_string()),
         pa.array(sources or ["src"] * n), category_array(["news"] * n), pa.array([None] * n, pa.string()),
         pa.array([None] * n, pa.float32()), pa.array(metas or ["{}"] * n)],
        schema=DOC_SCHEMA,
    )


def test_clean_batch_removes_ad_lines_drops_ad_pages_and_accounts_for_every_line():
    ad = "Flash sale: 40% off every order until Sunday!\nCall 0800 555 0199 now"
    with_ad = EN_PROSE.replace("\n\n", f"\n\n{ad}\n\n", 1)
    ad_page = "Short note.\n" + "\n".join([ad] * 3)
    short_after = ("The meeting moved to the school hall on Friday evening because the library roof was being "
                   "repaired.\n\nCall 0800 555 0199 now")
    kept, dropped, stats, audit = clean_batch(_batch([with_ad, EN_PROSE, ad_page, short_after]), CFG)
    removed = audit[REMOVED_LINES]
    assert kept.column("source_id").to_pylist() == ["s0", "s1"]
    assert kept.column("text")[0].as_py() == EN_PROSE  # the ad's paragraph is gone, nothing else
    assert kept.column("text")[1].as_py() == EN_PROSE
    assert kept.column("meta")[0].as_py() == '{"ad_lines_removed": 2}'
    assert set(dropped) == {"spam", TOO_SHORT_AFTER_LINES}
    assert "line_filters" in dropped["spam"].column("signal")[0].as_py()
    assert dropped["spam"].column("text")[0].as_py() == ad_page  # a dropped page is excluded whole
    assert removed.column("source_id").to_pylist() == ["s0", "s0", "s3"]  # every line removed, kept or not
    assert removed.column("reason").to_pylist() == [AD_LINE] * 3
    assert removed.column("line").to_pylist()[:2] == ad.split("\n")
    assert stats["lines_removed"][AD_LINE] == {"documents": 2, "lines": 3,
                                                "chars": sum(map(len, removed.column("line").to_pylist()))}


def test_line_filters_switched_off_keep_every_line():
    with_ad = EN_PROSE.replace("\n\n", "\n\nFlash sale: 40% off every order!\nCall 0800 555 0199 now\n\n", 1)
    cfg = CFG.replace(line_filters=CFG.line_filters.replace(enabled=False))
    kept, _, stats, audit = clean_batch(_batch([with_ad]), cfg)
    removed = audit[REMOVED_LINES]
    assert kept.column("text")[0].as_py() == with_ad and removed.num_rows == 0
    assert stats["lines_removed"][AD_LINE]["lines"] == 0


# Eight different articles of one site, each framed by its navigation bar and footer.
OPENINGS = ("The river rose slowly through the night", "Farmers moved their animals to the hill pastures",
            "The council met in the school hall", "Older residents remembered the flood of forty years before")
ARTICLES = [f"{OPENINGS[k % 4]}. Report number {k} on the river, the fields and the council's plans for the "
            f"embankment, the road budget and the spring floods, as told by resident {k}." for k in range(8)]
NAV, FOOTER = "Home | News | Weather | Contact", "© 2024 Valley Gazette. All rights reserved."


def _framed(k: int) -> str:
    return f"{NAV}\n\nNote\n\n{ARTICLES[k]}\n\n{FOOTER}"


def test_a_sites_navigation_bar_and_footer_are_removed_from_each_of_its_pages():
    kept, _, stats, audit = clean_batch(_batch([_framed(k) for k in range(8)]), CFG)
    removed = audit[REMOVED_LINES]
    assert kept.column("text").to_pylist() == [f"Note\n\n{ARTICLES[k]}" for k in range(8)]  # "Note": a label, kept
    assert removed.column("reason").to_pylist() == [REPEATED_LINE] * 16
    assert set(removed.column("line").to_pylist()) == {NAV, FOOTER}
    assert stats["lines_removed"][REPEATED_LINE]["documents"] == 8
    assert kept.column("meta")[0].as_py() == '{"repeated_lines_removed": 2}'


def _repeated(texts: list[str], groups: list[str]) -> list[set[int]]:
    found = repeated_lines(BatchText(texts), groups, CFG.line_filters)
    assert found == reference.repeated_lines(texts, groups, CFG.line_filters)
    return found


def test_lines_shared_by_copies_by_other_sources_or_by_few_pages_stay():
    copies = [_framed(0)] * 6  # copies of one page: dedup's to judge, not stripped of everything
    assert _repeated(copies, ["a"] * 6) == [set()] * 6
    assert _repeated([_framed(k) for k in range(8)], [f"source{k}" for k in range(8)]) == [set()] * 8
    framed_few = [_framed(k) if k < 5 else ARTICLES[k % 8] for k in range(40)]  # 5 of 40 pages: under a fifth
    assert not any(_repeated(framed_few, ["a"] * 40))
    assert _repeated([_framed(k) for k in range(8)], ["a"] * 8) == [{0, 6}] * 8
    # Grouped by the URL's host when the document has one, whatever the source is called.
    urls = [json.dumps({"url": f"https://valley.example/news/{k}"}) for k in range(8)]
    kept, _, _, audit = clean_batch(_batch([_framed(k) for k in range(8)], [f"f{k}" for k in range(8)], urls), CFG)
    assert audit[REMOVED_LINES].num_rows == 16


def test_the_batched_filter_equals_its_definition_on_random_pages():
    rng = random.Random(7)
    pool = [NAV, FOOTER, "Note", "  Prev Up Next  ", "相关阅读：本站推荐的其他文章", "a b", "", "", *OPENINGS,
            *(f"Line {k} of a page about something else entirely" for k in range(30))]
    for _ in range(60):
        docs = rng.randint(1, 30)
        texts = ["\n".join(rng.choice(pool) for _ in range(rng.randint(0, 12))) for _ in range(docs)]
        groups = [rng.choice("ab") for _ in range(docs)]
        _repeated(texts, groups)


def test_a_spam_scan_updated_for_changed_texts_equals_a_fresh_scan():
    texts = ["加微信 abc12345 免费领取", "plain text", "click here, buy now\n扫一扫 二维码", "nothing"]
    scan = SpamScan.of(texts, SPAM)
    changed = list(texts)
    changed[0], changed[2] = "二维码 扫码 包邮 包邮", "click here"
    updated, fresh = scan.updated(changed, SPAM), SpamScan.of(changed, SPAM)
    assert updated.lowered == fresh.lowered and updated.counts.tolist() == fresh.counts.tolist()
    assert updated.hit_text.tolist() == fresh.hit_text.tolist()
    assert updated.hit_offset.tolist() == fresh.hit_offset.tolist()
    assert scan.updated(list(texts), SPAM) is scan  # nothing changed: the same scan
