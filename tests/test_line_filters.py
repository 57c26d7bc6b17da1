"""Line filters of the clean stage: ad, contact and promotion lines out of kept documents, nothing else."""

from __future__ import annotations

import pyarrow as pa
import pytest

from common.config import load_config
from common.schema import DOC_SCHEMA, category_array
from stages.clean.lines import filter_lines
from stages.clean.spam import spam_matcher
from stages.clean.stage import AD_LINE, TOO_SHORT_AFTER_LINES, clean_batch

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
    "0.41440500499993504 0.3955516149999312",
])
def test_ordinary_lines_of_every_genre_stay(line):
    assert _lines(f"{EN_PROSE}\n\n{line}\n\n{ZH_PROSE}") == []


def _batch(texts: list[str]) -> pa.RecordBatch:
    n = len(texts)
    return pa.RecordBatch.from_arrays(
        [pa.array(range(n), pa.int64()), pa.array([f"s{i}" for i in range(n)]), pa.array(texts, pa.large_string()),
         pa.array(["src"] * n), category_array(["news"] * n), pa.array([None] * n, pa.string()),
         pa.array([None] * n, pa.float32()), pa.array(["{}"] * n)],
        schema=DOC_SCHEMA,
    )


def test_clean_batch_removes_ad_lines_drops_ad_pages_and_accounts_for_every_line():
    ad = "Flash sale: 40% off every order until Sunday!\nCall 0800 555 0199 now"
    with_ad = EN_PROSE.replace("\n\n", f"\n\n{ad}\n\n", 1)
    ad_page = "Short note.\n" + "\n".join([ad] * 3)
    short_after = ("The meeting moved to the school hall on Friday evening because the library roof was being "
                   "repaired.\n\nCall 0800 555 0199 now")
    kept, dropped, stats, removed = clean_batch(_batch([with_ad, EN_PROSE, ad_page, short_after]), CFG)
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
    kept, _, stats, removed = clean_batch(_batch([with_ad]), cfg)
    assert kept.column("text")[0].as_py() == with_ad and removed.num_rows == 0
    assert stats["lines_removed"][AD_LINE]["lines"] == 0
