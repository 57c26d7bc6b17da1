"""Personal data in the clean stage: every kind found in zh and en text however it is written, its look-alikes left,
and what clean.pii does with it (replace, drop_document, keep), accounted without keeping a value."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest

from common.config import load_config
from demo import content_pii
from demo.content_docs import clean_document
from stages.clean.pii import PLACEHOLDERS, find_pii, replace_pii
from stages.clean.stage import PII_REASON, PII_SPANS, clean_batch
from tests.test_line_filters import _batch

CFG = load_config().clean

# Written as people write them: inside parentheses, at a line's end, grouped, after +86, full width.
FOUND = [
    ("email", "如对数据有疑问，请发邮件至（wang.lei@hzpress.cn）联系作者。", "wang.lei@hzpress.cn"),
    ("email", "全角写法：li_na83＠nanmail.com.cn，请勿转发", "li_na83＠nanmail.com.cn"),
    ("email", "Send the corrected proofs to the editor at\nr.hart@tomlab.co.uk", "r.hart@tomlab.co.uk"),
    ("phone", "他的手机号是13912345678，晚上打。", "13912345678"),
    ("phone", "值班电话 +86 139 1234 5678", "+86 139 1234 5678"),
    ("phone", "请拨打１３９１２３４５６７８咨询", "１３９１２３４５６７８"),
    ("phone", "办公室电话（010）62345678，总机。", "（010）62345678"),
    ("phone", "总机 0755-2345678 转人工", "0755-2345678"),
    ("phone", "For the tour, call +44 20 7946 0958 on weekdays.", "+44 20 7946 0958"),
    ("id_number", "身份证号11010519491231002X已登记。", "11010519491231002X"),
    ("id_number", "The form showed 110105194912310021 twice? No: 11010519491231002x.", "11010519491231002x"),
    ("bank_card", "卡号 6222 0212 3456 7894，请核对。", "6222 0212 3456 7894"),
    ("bank_card", "card 4111111111111111 expired", "4111111111111111"),
    ("ip_address", "The attack came from 52.94.236.248 at night.", "52.94.236.248"),
    ("ip_address", "日志显示请求来自2606:4700:4700::1111。", "2606:4700:4700::1111"),
    ("ip_address", "IP地址：2606:4700:4700::1111", "2606:4700:4700::1111"),
    ("ip_address", "from 8.8.8.100 today", "8.8.8.100"),
    ("ip_address", "open http://52.94.236.248/1/index.html", "52.94.236.248"),
    ("email", "请发邮件至zhang.san@hzpress.cn：工作日回复", "zhang.san@hzpress.cn"),
    ("email", "escribe a juan@empresa.com.py", "juan@empresa.com.py"),
    ("phone", "座机 010 62345678", "010 62345678"),
    ("phone", "Tel.13912345678", "13912345678"),
    ("phone", "拨打86-13912345678", "86-13912345678"),
    ("phone", "13912345678－张经理", "13912345678"),
    ("bank_card", "No.6222021234567894", "6222021234567894"),
]
# Look-alikes that stay: versions, dates, ISBNs, prices, coordinates, code, example addresses, reserved ranges, and
# numbers shaped like the kinds that fail their check.
LEFT = [
    "Upgrade to 1.2.3.4 or v2.10.3 first.", "ISBN 978-7-111-54742-6, also 9787111547426.",
    "会议定于2023-12-01 14:30举行。", "售价￥1299.00，运费12元。", "坐标 39.9042, 116.4074。",
    "Write to user@example.com or admin@mail.example.org; bob@site.test is a test address.",
    "git clone git@github.com:kiln/kiln.git && open logo@2x.png",
    "Private 192.168.1.10, 10.0.0.7, loopback 127.0.0.1, docs 203.0.113.7 and 2001:db8::1, fe80::1%eth0.",
    "身份证号110105194912310021校验不对。", "订单号 4111111111111112 与 6222021234567890 都不通过校验。",
    "x = a + 12345678; std::vector<int> v; a::b::c; at 12:30:45 UTC+08:00.",
    "Order 20231201123456789, tracking 1Z999AA10123456784, EAN 6901234567892.",
    "Call the helpdesk at extension 4567.", "The result was 3.14159265358979 exactly.",
    # what real manuals hold: section numbers, Perl modules, multicast groups, a MAC address, a netmask, INT_MAX
    "12.6.2.1. Compile and install; see Section 26.3.3.1.", "后端模块 B::CC 与 B::C 生成C代码。",
    "ff02::1 ip6-allnodes, mDNS 224.0.0.251 and FF02::FB", "trunc(macaddr8 '12:34:56:78:90:ab:cd:ef')",
    "d-i netcfg/get_netmask string ffff:ffff:ffff:ffff::", "取值范围是 -2147483648 到 +2147483647。",
    "label 2002::/16 2; sortlist 130.155.160.0/255.255.240.0",
    # rows of years, signed decimals and coordinates, a browser's version, code
    "2017 2018 2019 2020", "height 175 2019 2020", "x = +3.14159265358979; y = +40.7127837; z = +123.45 678.90",
    "Mozilla/5.0 Chrome/120.0.0.0 Safari/537.36", "y = x@self.weight.T + b", "logo icon@2x.avif",
]


@pytest.mark.parametrize(("kind", "text", "value"), FOUND)
def test_every_kind_is_found_however_it_is_written(kind: str, text: str, value: str):
    [spans] = find_pii([text])
    assert [(s.kind, text[s.start:s.end]) for s in spans] == [(kind, value)]
    assert replace_pii(text, spans).text == text.replace(value, PLACEHOLDERS[kind])


def test_look_alikes_are_left_alone():
    assert find_pii(LEFT) == [[] for _ in LEFT]


def test_generated_values_are_found_and_generated_look_alikes_left_in_real_pages():
    rng = random.Random(11)
    planted, negatives = [], []
    for i in range(150):
        lang = ("zh", "en")[i % 2]
        host = clean_document(rng, rng.choice(("news", "academic", "dialogue", "literature")), lang, "web")
        planted.append(content_pii.plant_pii(rng, host, lang))
        negatives.append(content_pii.plant_negatives(rng, host, lang))
    for (text, values), spans in zip(planted, find_pii([t for t, _ in planted]), strict=True):
        assert sorted(text[s.start:s.end] for s in spans) == sorted(values)
    for (text, _), spans in zip(negatives, find_pii([t for t, _ in negatives]), strict=True):
        assert spans == [], [text[s.start:s.end] for s in spans]


def test_kinds_switched_off_are_not_looked_for():
    text = "作者把邮箱 wang.lei@hzpress.cn 和服务器地址52.94.236.248都写在了论文的最后一页，方便读者核对原始数据。"
    assert [s.kind for s in find_pii([text], ("ip_address",))[0]] == ["ip_address"]
    cfg = CFG.replace(pii=CFG.pii.replace(email=False, ip_address=False))
    kept, _, stats, _ = clean_batch(_batch([_page(text)]), cfg)
    assert text in kept.column("text")[0].as_py() and stats["pii"]["documents"] == 0


def _page(line: str) -> str:
    rng = random.Random(len(line))
    return f"{clean_document(rng, 'news', 'zh', 'web')}\n\n{line}"


def test_clean_replaces_counts_and_records_positions_but_never_values():
    texts = [_page(text) for _, text, _ in FOUND] + [_page(text) for text in LEFT]
    # the step alone: the line filters take contact lines whole, the timestamp scrubber takes dates
    cfg = CFG.replace(line_filters=CFG.line_filters.replace(enabled=False), scrub_timestamps=False)
    kept, dropped, stats, audit = clean_batch(_batch(texts), cfg)
    out = dict(zip(kept.column("source_id").to_pylist(), kept.column("text").to_pylist(), strict=True))
    assert not dropped and len(out) == len(texts)
    for i, (kind, _, value) in enumerate(FOUND):
        assert value not in out[f"s{i}"] and PLACEHOLDERS[kind] in out[f"s{i}"]
    for i, text in enumerate(LEFT, len(FOUND)):
        assert text in out[f"s{i}"]
    records = audit[PII_SPANS]
    assert records.column_names == ["doc_id", "source_id", "kind", "start", "end"]
    for row in records.to_pylist():
        assert out[row["source_id"]][row["start"]:row["end"]] == PLACEHOLDERS[row["kind"]]
    assert not any(value in json.dumps(records.to_pylist(), ensure_ascii=False) for _, _, value in FOUND)
    assert stats["pii"]["documents"] == len(FOUND)
    assert {kind: n["spans"] for kind, n in stats["pii"]["kinds"].items()} == Counter(kind for kind, _, _ in FOUND)
    assert json.loads(kept.column("meta")[0].as_py()) == {"pii": {"email": 1}}


def test_drop_document_drops_with_the_placeholders_and_keep_leaves_the_text():
    texts = [_page("作者把邮箱 wang.lei@hzpress.cn 和服务器地址52.94.236.248都写在了论文的最后一页，方便读者核对原始数据。"),
             _page(LEFT[0])]
    cfg = CFG.replace(pii=CFG.pii.replace(action="drop_document"))
    kept, dropped, _, _ = clean_batch(_batch(texts), cfg)
    assert kept.column("source_id").to_pylist() == ["s1"]
    gone = dropped[PII_REASON]
    assert gone.column("signal").to_pylist() == ["pii: 1 email, 1 ip_address"]
    assert "52.94.236.248" not in gone.column("text")[0].as_py() and "<ip_address>" in gone.column("text")[0].as_py()

    cfg = CFG.replace(pii=CFG.pii.replace(action="keep"))
    kept, dropped, stats, audit = clean_batch(_batch(texts), cfg)
    assert kept.column("text").to_pylist() == texts and not dropped
    assert stats["pii"]["documents"] == 1
    row = audit[PII_SPANS].to_pylist()[0]
    assert texts[0][row["start"]:row["end"]] == "wang.lei@hzpress.cn"


def test_kiln_run_replaces_personal_data_and_reports_it(tmp_path: Path, in_process):
    rng = random.Random(3)
    records, planted = [], {}
    for i in range(150):
        lang = ("zh", "en")[i % 2]
        category = rng.choice(("news", "encyclopedia", "academic"))
        text = clean_document(rng, category, lang, "web")
        if i % 3 == 0:
            text, planted[f"doc-{i}"] = content_pii.plant_pii(rng, text, lang)
        records.append({"id": f"doc-{i}", "text": text, "category": category, "source": "web"})
    corpus = tmp_path / "pages.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    data = tmp_path / "data"
    out = in_process("-m", "kiln", "run", "--input", str(corpus), "--data-dir", str(data),
                     "--set", "clean.pii.action=drop_document",  # a corpus this small: a larger, shorter validation split
                     "--set", "mix.validation_fraction=0.05", "--set", "tokenize.seq_len=128").stdout
    dropped = pa.ipc.open_file(next((data / "clean" / "_excluded" / PII_REASON).glob("*.arrow"))).read_all()
    assert dropped.num_rows > 0 and set(dropped.column("source_id").to_pylist()) <= set(planted)
    assert "clean personal data (drop_document):" in out
    kept = pa.Table.from_batches([b for f in sorted((data / "clean").glob("part-*.arrow"))
                                  for b in pa.ipc.open_file(f).read_all().to_batches()])
    text = "\n".join(kept.column("text").to_pylist() + dropped.column("text").to_pylist())
    assert not any(value in text for values in planted.values() for value in values)
