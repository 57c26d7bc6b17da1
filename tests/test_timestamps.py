"""Timestamp scrubbing: every removed form, what survives, debris handling, line structure, idempotence."""

from __future__ import annotations

import pytest

from stages.clean.timestamps import scrub_timestamps

REMOVED = [
    # numeric dates and ISO 8601 date-times
    ("Meeting on 2023-05-01 in Paris.", "Meeting on in Paris.", 1),
    ("Meeting on 2023/5/1 in Paris.", "Meeting on in Paris.", 1),
    ("Meeting on 2023.05.01 in Paris.", "Meeting on in Paris.", 1),
    ("Meeting on 05/01/2023 in Paris.", "Meeting on in Paris.", 1),
    ("Meeting on 1/5/2023 in Paris.", "Meeting on in Paris.", 1),
    ("Meeting on 31.12.2022 in Paris.", "Meeting on in Paris.", 1),
    ("Started 2023-05-01T12:30:05Z and ended.", "Started and ended.", 1),
    ("Started 2023-05-01T12:30:05+08:00 and ended.", "Started and ended.", 1),
    ("Started 2023-05-01 12:30 and ended.", "Started and ended.", 1),
    ("Started 2023-05-01 12:30:05.123 and ended.", "Started and ended.", 1),
    ("Two days: 2023-05-01 and 2023-05-02 here.", "Two days: and here.", 2),
    # times
    ("We met at 12:30 today.", "We met at today.", 1),
    ("We met at 12:30:05 today.", "We met at today.", 1),
    ("We met at 08:30 AM today.", "We met at today.", 1),
    ("We met at 8:30pm today.", "We met at today.", 1),
    ("We met at 8 a.m. sharp.", "We met at sharp.", 1),
    ("the meeting at 8:30 went well", "the meeting at went well", 1),
    ("open 09:00-17:00 daily", "open daily", 1),
    ("from 8:30 to 9:30", "from", 1),
    ("我们上午10:30开会。", "我们开会。", 1),
    ("我们上午10：30开会。", "我们开会。", 1),
    ("我们下午3点20分开会。", "我们开会。", 1),
    ("我们10时30分开会。", "我们开会。", 1),
    ("我们3点半见", "我们见", 1),
    ("晚上8点出发", "出发", 1),
    # Chinese dates
    ("他2023年5月1日来到北京。", "他来到北京。", 1),
    ("他2023年05月01日 08:30来到北京。", "他来到北京。", 1),
    ("他2023年5月1号来到北京。", "他来到北京。", 1),
    ("他5月1日 14:00来到北京。", "他来到北京。", 1),
    ("他2023年5月1日 星期一 下午3点到达。", "他到达。", 1),
    ("他二〇二三年五月一日来到北京。", "他来到北京。", 1),
    ("他在一九九八年十二月三十一日出生", "他在出生", 1),
    ("2023年5月1日，北京晴。", "北京晴。", 1),
    # English dates
    ("The launch was on May 1, 2023 in Texas.", "The launch was on in Texas.", 1),
    ("The launch was on 1 May 2023 in Texas.", "The launch was on in Texas.", 1),
    ("The launch was on May 1st, 2023 14:02 in Texas.", "The launch was on in Texas.", 1),
    ("the 2nd May 2023 meeting", "the meeting", 1),
    ("It happened Monday, May 1, 2023 at dawn.", "It happened at dawn.", 1),
    ("It happened Jan. 5, 2023 and Sept 5, 2023.", "It happened and.", 2),
    ("Mon, 01 May 2023 12:30:05 GMT", "", 1),
    ("Wed Jan 5 2023", "", 1),
    ("On May 1, 2023, the company announced.", "On, the company announced.", 1),
    ("The video was posted on May 1, 2023.", "The video was posted on.", 1),
    # labelled fields: label and value go together
    ("发布时间：2023-05-01 10:00\n正文内容", "正文内容", 1),
    ("更新于 2023-05-01\n正文内容", "正文内容", 1),
    ("发表于2023年5月1日\n正文内容", "正文内容", 1),
    ("本文发表于2023年5月1日，转载请注明", "本文，转载请注明", 1),
    ("最后更新时间：2023-05-01", "", 1),
    ("截止日期 2023-05-01", "", 1),
    ("时间: 12:30", "", 1),
    ("时间：上午10:30", "", 1),
    ("日期：2023/5/1", "", 1),
    ("日期：2023年5月", "", 1),
    ("日期：20230501", "", 1),
    ("日期：二〇二三年五月一日", "", 1),
    ("Updated: 5月1日", "", 1),
    ("活动时间：2023-05-01 至 2023-05-03", "", 1),
    ("Posted: 2023-05-01", "", 1),
    ("Posted on May 1, 2023 by admin", "by admin", 1),
    ("posted 2023-05-01 by admin", "by admin", 1),
    ("Date: 2023-05-01", "", 1),
    ("Date:2023-05-01", "", 1),
    ("Date: Mon, 01 May 2023 12:30:05 GMT", "", 1),
    ("Release date: 2023-05-01", "", 1),
    ("Updated: May 2023", "", 1),
    ("Last modified: 2023-05-01 10:00", "", 1),
    ("Published 2023-05-01", "", 1),
    ("最后修改：2023-05-01", "", 1),
    ("Generated at 12:30:05", "", 1),
    ("time: 12:30", "", 1),
    ("Smith (2020). Retrieved May 1, 2023.", "Smith (2020).", 1),
    ("Date: 2023-05-01, Time: 12:30", "", 2),
    # brackets that held only the timestamp, log prefixes
    ("[2023-05-01 12:30:05] INFO started", "INFO started", 1),
    ("    [2023-05-01 12:30:05] indented log", "    indented log", 1),
    ("2023-05-01 12:30:05,123 - INFO - msg", "INFO - msg", 1),
    ("Release notes (2023-05-01) are out.", "Release notes are out.", 1),
    ("Release notes (Updated: 2023-05-01) are out.", "Release notes are out.", 1),
    ("（2023年5月1日）新华社电", "新华社电", 1),
    ("【发布时间：2023-05-01】正文", "正文", 1),
    ("正文（2023-05-01更新）", "正文", 1),
    ("来源：本站\u30002020年06月18日\u300021:49", "来源：本站", 1),
    # debris: separators, doubled spaces, dangling colons
    ("作者：张三，发布时间：2023-05-01，阅读：100", "作者：张三，阅读：100", 1),
    ("作者：张三 | 发布时间：2023-05-01 | 阅读：100", "作者：张三 | 阅读：100", 1),
    ("作者：张三 发布时间：2023年5月1日 08:30 来源：新华社", "作者：张三 来源：新华社", 1),
    ("foo | Posted on May 1, 2023 | bar", "foo | bar", 1),
    ("| a | 2023-05-01 | b |", "| a | | b |", 1),
    ("a 2023-05-01  b", "a b", 1),
    ("Deadline: 2023-05-01", "Deadline", 1),
]

SURVIVES = [
    "in 1998 the 2020 election, the 1990s",
    "2019年的研究表明，公元前221年，2023年度报告",
    "In May 2023, prices rose. May 1 is a holiday.",
    "2023年5月，价格上涨。5月1日是劳动节。",
    "每年5月都会下雨",
    "version 2.10.1, Python 3.11, 3.14159, 1,234,567",
    "第3章第2节",
    "the ratio 3:2:2:1:1:1 and a ratio 10:30:2",
    "比分3:1，比分3：1",
    "IP 192.168.1.1 and 0.0.0.0",
    "phone 138-1234-5678, +86 10 8888 6666",
    "ISBN 978-7-111-12345-6",
    "3小时20分钟，10 minutes",
    "John 3:16 says",
    "a = b[1:2]; x:y; y = x[10:20]",
    "第3点是，当温度为10时",
    "see https://example.com/2023/05/01/post?d=2023-05-01 now",
    "www.example.com/2023-05-01.html",
    "/var/log/2023-05-01.log and release-2023-05-01.tar.gz and report_2023_05_01",
    "ID2023-05-01",
    "Build 20230501 passed",
    "version 2023.05.07 and pytz==2023.3",
    "2023-13-01 12:75 25:00",
    "1998-2002, the 2018-19 season",
    "Chapter 1, 2023 edition",
    "这段时间没有数字",
    "",
]


@pytest.mark.parametrize(("text", "expected", "count"), REMOVED)
def test_removes_timestamp(text: str, expected: str, count: int) -> None:
    assert scrub_timestamps(text) == (expected, count)


@pytest.mark.parametrize("text", SURVIVES)
def test_natural_text_survives(text: str) -> None:
    assert scrub_timestamps(text) == (text, 0)


@pytest.mark.parametrize(("text", "expected", "count"), REMOVED)
def test_idempotent(text: str, expected: str, count: int) -> None:
    once, _ = scrub_timestamps(text)
    assert scrub_timestamps(once) == (once, 0)


def test_surrounding_text_intact() -> None:
    text = (
        "The committee, which met in Geneva (Switzerland), approved the plan on 2023-05-01 after a long debate; "
        "its 12 members — including Dr. Li (李医生) — voted 9:3 in favour.\n"
        "会议指出，2019年的数据显示，增长率为3.5%，并于2023年5月1日 上午10:30正式发布《报告》。"
    )
    expected = (
        "The committee, which met in Geneva (Switzerland), approved the plan on after a long debate; "
        "its 12 members — including Dr. Li (李医生) — voted 9:3 in favour.\n"
        "会议指出，2019年的数据显示，增长率为3.5%，并于正式发布《报告》。"
    )
    assert scrub_timestamps(text) == (expected, 2)


def test_only_emptied_lines_are_dropped() -> None:
    text = (
        "Title\n\n发布时间：2023-05-01 10:00\n\n正文第一段。\n   \n"
        "正文第二段，写于2023年5月1日。\n[2023-05-01 12:30:05]\nEnd"
    )
    expected = "Title\n\n\n正文第一段。\n   \n正文第二段，写于。\nEnd"
    assert scrub_timestamps(text) == (expected, 3)


def test_emptied_line_with_several_timestamps_is_dropped() -> None:
    assert scrub_timestamps("head\n2023-05-01 | 12:30\ntail") == ("head\ntail", 2)


def test_crlf_line_breaks_are_kept() -> None:
    text = "line one\r\n2023-05-01\r\nline three at 12:30\r\n"
    assert scrub_timestamps(text) == ("line one\r\nline three at\r\n", 2)


def test_last_line_dropped_with_its_line_break() -> None:
    assert scrub_timestamps("Hello\nPosted: 2023-05-01") == ("Hello", 1)
    assert scrub_timestamps("Hello\r\nPosted: 2023-05-01") == ("Hello", 1)
    assert scrub_timestamps("Hello\nPosted: 2023-05-01\n") == ("Hello\n", 1)


def test_text_of_only_timestamps_becomes_empty() -> None:
    assert scrub_timestamps("2023-05-01\n12:30:05\n") == ("", 2)


def test_timestamp_next_to_url_is_removed_url_kept() -> None:
    text = "Posted: 2023-05-01 https://example.com/2023/05/01/post"
    assert scrub_timestamps(text) == ("https://example.com/2023/05/01/post", 1)
