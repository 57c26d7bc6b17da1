"""The clean stage's parts on hand-written Chinese and English examples."""

from __future__ import annotations

import random

import ftfy
import numpy as np
import pyarrow as pa
import pytest

from common.config import load_config
from common.errors import ConfigError, KilnError
from common.schema import DOC_SCHEMA, category_array
from common.signal_names import SIGNAL_NAMES
from stages.clean.lid import LangGuess, accepted_language, bundled_model_path, decide_languages, identify, prose_lines
from stages.clean.repair import FTFY_CONFIG, repair
from stages.clean.repetition import repetition_signals
from stages.clean.rules import apply_rules, build_rules
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher
from stages.clean.stage import clean_batch
from tests.signals_reference import TOKEN_RE

CFG = load_config().clean

ZH_PARAGRAPH = (
    "长江是中国最长的河流，全长约六千三百公里，流经十一个省级行政区。它的流域面积占全国陆地面积的五分之一，"
    "养育了四亿多人口。沿岸有重庆、武汉、南京和上海等重要城市，航运十分发达。\n"
    "人们在长江上修建了许多水利工程，其中三峡工程是世界上规模最大的水电站之一。它在防洪、发电和航运方面"
    "都发挥了重要作用，但也引起了关于生态环境和移民安置的讨论。"
)
EN_PARAGRAPH = (
    "The Yangtze is the longest river in Asia and the third longest in the world. It flows for about six "
    "thousand kilometres from the glaciers of the Tibetan Plateau to the East China Sea.\n"
    "The river basin is home to roughly a third of the population of China, and its delta is one of the "
    "most productive economic regions of the country. Dams, ports and bridges have changed the river, and "
    "scientists continue to study how these changes affect fish, wetlands and the people who live nearby."
)
POEM_ZH = "静夜思\n\n床前明月光，\n疑是地上霜。\n举头望明月，\n低头思故乡。\n\n春晓\n\n春眠不觉晓，\n处处闻啼鸟。\n夜来风雨声，\n花落知多少。"
TECH_EN = (
    "## Installing the client\n\nInstall the package with pip and check that the command is on your path. The "
    "client reads its settings from a file in your home directory, and every option can also be set with an "
    "environment variable.\n\n```python\nimport json\n\n\ndef load_settings(path):\n    with open(path) as handle:\n"
    "        return json.load(handle)\n\n\ndef merge(defaults, overrides):\n    result = dict(defaults)\n"
    "    result.update(overrides)\n    return result\n```\n\nThe function `merge` returns a new dictionary and "
    "leaves both of its arguments unchanged, which makes it safe to call from several threads at once."
)


def _signals(text: str) -> dict[str, float]:
    columns = compute_signals([text], spam_matcher(tuple(CFG.spam_patterns)))
    return {name: float(values[0]) for name, values in columns.items()}


def _verdict(text: str, lang: str) -> str | None:
    signals = {k: np.array([v]) for k, v in _signals(text).items()}
    reasons, _ = apply_rules(build_rules(CFG.rules), signals, [lang], [None])
    return reasons[0]


# --- tokens and CJK pitfalls -------------------------------------------------------------

def test_han_characters_are_tokens_and_latin_runs_are_words():
    text = "用Python 3.11写代码，很快！"
    assert TOKEN_RE.findall(text) == ["用", "Python", "3", "11", "写", "代", "码", "很", "快"]
    signals = _signals(text)
    assert signals["q_tokens"] == 9 and signals["q_alpha_token_frac"] == pytest.approx(7 / 9)


def test_chinese_is_not_judged_by_english_word_length():
    signals = _signals(ZH_PARAGRAPH)
    assert signals["q_mean_word_len"] == 0.0  # no Latin words: Han characters are not "words" of length 1..n
    assert _verdict(ZH_PARAGRAPH, "zh") is None


def test_chinese_terminal_punctuation_counts():
    assert _signals("第一行结束了。\n第二行呢？\n第三行！\n第四行……")["q_terminal_punct_line_frac"] == 1.0
    assert _signals("first line.\nsecond line?\nno ending here")["q_terminal_punct_line_frac"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("text,lang", [(ZH_PARAGRAPH, "zh"), (EN_PARAGRAPH, "en"), (POEM_ZH, "zh"),
                                       (TECH_EN, "en")])
def test_clean_text_of_every_genre_passes_every_rule(text, lang):
    assert _verdict(text, lang) is None


# --- Kiln's own rules -------------------------------------------------------------------

@pytest.mark.parametrize("text,lang,rule", [
    ("★★★★★☆☆☆☆☆ 好评！★★★★★☆☆☆☆☆ 好评！★★★★★☆☆☆☆☆\n" * 3 + ZH_PARAGRAPH[:80], "zh", "symbol_runs"),
    ("!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! BIG SALE !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n" + EN_PARAGRAPH[:100], "en",
     "symbol_runs"),
    ("加微信领取优惠券，扫码关注公众号！\n限时优惠，立即购买，全场包邮。\n联系电话：13800000000，客服热线全天在线。\n" * 2
     + ZH_PARAGRAPH[:60], "zh", "spam"),
    ("Click here to buy now! Limited time offer.\nFree shipping on every order, act now.\n"
     "Use promo code SAVE50 for 50% off.\nCall now, operators are waiting.\n", "en", "spam"),
    ("def load(path):\n    pass  # TODO\n\ndef save(data):\n    raise NotImplementedError\n\n"
     "def merge(a, b):\n    # TODO: implement this function\n    pass\n" + EN_PARAGRAPH[:200], "en", "code_stubs"),
    (EN_PARAGRAPH.replace("e", "\ufffd")[:400], "en", "mojibake"),
    ("å¤§å®¶å¥½ï¼Œæ¬¢è¿Žæ\x9d¥åˆ°è¿™é‡Œã€‚" * 10, "zh", "mojibake"),
    ("鍩轰簬绌洪棿缁熻鐨勬嫨鏍￠琛屼负鐮旂┒锛屾垜浠敹闆嗕簡鏉ヨ嚜瀛︿範鑰呯殑鏍锋湰銆" * 5, "zh", "mojibake_han"),
    ("Short note.", "en", "too_short"),
    ("好的。", "zh", "too_short"),
])
def test_each_kiln_rule_catches_its_defect(text, lang, rule):
    assert _verdict(text, lang) == rule


def test_one_todo_in_real_code_is_fine():
    text = TECH_EN.replace("    result.update(overrides)\n", "    # TODO: validate keys\n    result.update(overrides)\n")
    assert _signals(text)["q_stub_frac"] == 0.0
    assert _verdict(text, "en") is None


def test_markdown_rules_and_laughter_are_not_symbol_runs():
    text = "Title\n=====\n\n" + EN_PARAGRAPH + "\n\n-----\n\n哈哈哈哈，太好了。" + ZH_PARAGRAPH
    assert _signals(text)["q_symbol_run_frac"] < 0.02


def test_table_and_comment_box_borders_are_formatting_not_symbol_runs():
    psql = ("SHOW ALL;\n     name      | setting\n---------------+---------\n allow_mods    | off\n"
            " zero_pages    | off\n(2 rows)\n")
    grid = "+--------+-------+\n| name   | value |\n+========+=======+\n| a      | 1     |\n+--------+-------+\n"
    markdown = "| name | value |\n|:-----|------:|\n| a    | 1     |\n"
    box = "    /*****************************\n     *\n     * Checks the input.\n     *\n     *****************************/\n"
    assert _signals(psql + grid + markdown + box + EN_PARAGRAPH[:200])["q_symbol_run_frac"] == 0.0
    shouted = "!!!!!!!!!!!!!!!!!!!! BIG SALE !!!!!!!!!!!!!!!!!!!!\n" + EN_PARAGRAPH[:100]
    assert _signals(shouted)["q_symbol_run_frac"] > 0.1  # a run beside words on its line still counts


def test_dialogue_trailing_off_in_chinese_ellipses_is_not_truncated_text():
    dialogue = "\n".join(["艾琳：首先是向右擦除……", "艾琳：然后是向左擦除……", "艾琳：接着，滑入。",
                           "艾琳：向上滑入……", "艾琳：和向下滑入。"] * 3)
    assert _signals(dialogue)["q_ellipsis_line_frac"] == 0.0
    snippets = "\n".join(["市政府召开常务会议，研究部署今年的重点工作…", "全省春运客流比去年同期增长一成以上，铁路部门…",
                           "专家认为，今年粮食生产形势总体较好，但仍需…", "本市新建的三座公园将于五月向市民开放，届时…",
                           "高校毕业生就业工作会议昨日召开，会上提出…", "气象台发布寒潮蓝色预警，提醒市民注意防寒…",
                           "图书馆延长周末开放时间，读者可在晚上九点前…", "新能源汽车销量连续三个月上升，业内人士表示…"])
    assert _signals(snippets)["q_ellipsis_line_frac"] == 1.0 and _verdict(snippets, "zh") == "ellipsis_lines"


def test_a_sentence_carried_across_lines_with_ellipses_is_not_truncated_text():
    """Subtitles and scripts carry one sentence across lines or turns: "...", then "..." opening the next line.
    Neither line is cut short, and the two ellipses are one pause."""
    subtitles = "\n".join(["I thought we could take the train into town this evening...",
                            "...but the last one left for the coast an hour ago.", "So we walk the whole way.",
                            "Unless your brother, the one who lives by the harbour...",
                            "...still has that old car of his that he never drives?",
                            "He sold it last winter...", "...to pay for the new roof on the house...",
                            "...which leaks anyway, every time it rains."])
    turns = "\n".join(["MARA: First we check the north gate and the stables...", "MARA: ...then the bridge...",
                        "JONAS: ...and then we can finally go home?", "MARA: Then we go home, yes.",
                        "JONAS: I never said that I was afraid...", "MARA: ...of the dark. I know you did not.",
                        "JONAS: Of the river, actually.", "MARA: Fine. The river it is."])
    for text in (subtitles, turns):
        hanging = text.replace("\n...", "\n").replace(": ...", ": ")  # the same words, each line left hanging
        carried, left = _signals(text), _signals(hanging)
        assert carried["q_ellipsis_line_frac"] == 0.0 and left["q_ellipsis_line_frac"] >= 0.375
        assert carried["q_symbol_word_ratio"] == left["q_symbol_word_ratio"] < 0.1
        assert _verdict(text, "en") is None
    snippets = "\n".join(f"Result {i}: {text}..." for i, text in enumerate((
        "The committee said the new rules would apply from", "Rail traffic over the holiday rose by a tenth and",
        "Experts expect a good harvest this year, but warn that", "Three new parks will open to the public in",
        "The library will stay open until nine on weekends so", "Sales of electric cars rose for a third month as")))
    assert _signals(snippets)["q_ellipsis_line_frac"] == 1.0  # a labelled line after a cut one does not carry it on


def test_shell_prompts_and_comments_are_not_hashtags():
    session = ("Become root and install the package:\n\n# apt install makedev\n# cd /dev\n# MAKEDEV generic\n\n"
               "## Notes\n\nThe commands above run as root; the prompt shows # instead of $.\n")
    assert _signals(session)["q_symbol_word_ratio"] == 0.0
    hashtags = ("What a great day we had at the beach with the whole family and our friends from the city. "
                "#summer #sun #beach #fun #travel #love #photo #instagood #happy #life #weekend #sea")
    assert _verdict(hashtags, "en") == "symbol_word_ratio"


# --- Gopher repetition ------------------------------------------------------------------

def _reference(tokens: list[str], n: int) -> float:
    grams = [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
    counts = {g: grams.count(g) for g in set(grams)}
    total = sum(map(len, tokens))
    if n <= 4:
        return max((counts[g] * sum(map(len, g)) for g in counts if counts[g] > 1), default=0) / total
    covered = [False] * len(tokens)
    for i, g in enumerate(grams):
        if counts[g] > 1:
            covered[i:i + n] = [True] * n
    return sum(len(t) for t, c in zip(tokens, covered, strict=True) if c) / total


def test_batched_repetition_equals_a_per_document_reference():
    rng = random.Random(3)
    words = ["river", "长", "江", "data", "模", "型", "the", "of", "a"]
    docs = [[rng.choice(words) for _ in range(rng.randint(0, 60))] for _ in range(40)]
    flat = [token for tokens in docs for token in tokens]
    batched = repetition_signals(np.array([hash(token) for token in flat], dtype=np.int64),
                                 np.array([len(token) for token in flat], dtype=np.int64),
                                 np.array([len(tokens) for tokens in docs], dtype=np.int64))
    for i, tokens in enumerate(docs):
        for n in range(2, 11):
            name = f"q_top{n}gram_frac" if n <= 4 else f"q_dup{n}gram_frac"
            expected = _reference(tokens, n) if len(tokens) >= n and tokens else 0.0
            assert batched[name][i] == pytest.approx(expected), (i, n)


def test_repeated_paragraphs_are_caught_in_both_languages():
    assert _verdict((EN_PARAGRAPH + "\n") * 3, "en") in {"dup_lines", "dup_line_chars", "dup10gram"}
    assert _verdict((ZH_PARAGRAPH + "\n") * 3, "zh") in {"dup_lines", "dup_line_chars", "dup10gram", "top4gram"}


# --- formatting repetition, lossy mojibake, navigation -------------------------------------

JOKES = "\n".join(f"A: Tell me a joke\nB: {line}" for line in (
    "I never forget a face, but in your case I will make an exception.",
    "Why did the scarecrow win an award? Because he was outstanding in his field.",
    "I told my wife she was drawing her eyebrows too high. She looked surprised.",
    "What do you call a fake noodle? An impasta, of course, and it is delicious.",
    "Parallel lines have so much in common. It is a shame they will never meet."))
SAYINGS = "\n".join(f"{line}\n    --《谚语》" for line in (
    "对人要宽，对己要严。", "过头话少说，过头事少做。", "有麝自然香，不用大风扬。", "吃饭防噎，走路防跌。",
    "自夸没人爱，残花没人戴。", "字不可重写，话不可乱传。", "实干能成事，虚心能添智。"))


@pytest.mark.parametrize("text,lang", [(JOKES, "en"), (SAYINGS, "zh")])
def test_a_recurring_prompt_or_attribution_is_format_not_duplication(text, lang):
    assert _signals(text)["q_dup_line_frac"] == 0.0
    assert _verdict(text, lang) is None


def test_a_repeated_block_and_a_repeated_line_are_duplicates():
    block = "Buy cheap watches today\nBest replica shop online\n"
    assert _signals(EN_PARAGRAPH + "\n" + block * 4)["q_dup_line_frac"] > 0.3
    assert _signals(EN_PARAGRAPH + "\n" + "Subscribe to our newsletter\n" * 5)["q_dup_line_frac"] > 0.3


def test_lossy_mojibake_is_marked_and_french_is_not():
    text = "The menu doesnât list them: they are on the âspecialsâ board.\n" + EN_PARAGRAPH
    assert _signals(text)["q_mojibake_marks"] == 3 and _signals(text)["q_mojibake_frac"] == 0.0
    assert _verdict(text, "en") == "mojibake_marks"
    french = "Le château est âgé de trois siècles ; à l'âge classique, on y préférait la pâte feuilletée."
    assert _signals(french)["q_mojibake_marks"] == 0


EN_APOSTROPHES = (
    "It’s said that the river’s delta doesn’t flood as it once did. Farmers who’ve lived there all their lives "
    "say they’d never seen the water so low, and the fishermen’s catches aren’t what they were. “We’re told "
    "it’s the dams,” one of them said, “but nobody’s sure.”\n" + EN_PARAGRAPH)


def _lost_verdict(text: str, lang: str) -> str | None:
    """The verdict of the mojibake_lost rule alone."""
    rules = [rule for rule in build_rules(CFG.rules) if rule.name == "mojibake_lost"]
    signals = {k: np.array([v]) for k, v in _signals(text).items()}
    return apply_rules(rules, signals, [lang], [None])[0][0]


def test_characters_lost_to_question_marks_drop_the_document():
    """Text written through an encoding that could not hold it, with errors="replace"."""
    for text, lang in ((ZH_PARAGRAPH.encode("ascii", "replace").decode(), "zh"),
                       (EN_APOSTROPHES.encode("ascii", "replace").decode(), "en"),
                       ((ZH_PARAGRAPH + "\n" + EN_PARAGRAPH).encode("latin-1", "replace").decode(), "en")):
        assert _signals(text)["q_lost_char_frac"] > 0.005
        assert _lost_verdict(text, lang) == "mojibake_lost"


def test_a_few_lost_characters_stay_and_ordinary_question_marks_are_not_lost_characters():
    one_lost = EN_PARAGRAPH.replace("The river basin", "The river?s basin")
    assert _signals(one_lost)["q_lost_char_frac"] == 0.0 and _lost_verdict(one_lost, "en") is None
    ordinary = (
        "What??? Really?? Yes. Is it longer than the Nile? No.\nSearch it: https://example.org/find?q=yangtze&lang=en "
        "or index.php?title=Yangtze_River.\nThe pattern colou?r matches both spellings; in C#, a ?? b picks the first "
        "value that is not null, and x ??= y assigns only when x is null.\n???\n" + EN_PARAGRAPH)
    assert _signals(ordinary)["q_lost_char_frac"] == 0.0
    for text, lang in ((ordinary, "en"), (ZH_PARAGRAPH + "长江有多长？六千三百公里。", "zh"), (EN_APOSTROPHES, "en"),
                       (TECH_EN, "en"), (MAN_PAGE, "en")):
        assert _lost_verdict(text, lang) is None


def test_an_index_page_is_navigation_and_a_poem_is_not():
    index = "\n".join(f"{name}() (in module {module})" for name in ("fill", "wrap", "dedent", "indent", "shorten")
                      for module in ("textwrap", "curses", "turtle", "string", "pprint"))
    assert _signals(index)["q_nav_line_frac"] > 0.9 and _verdict(index, "en") == "navigation"
    contents = "\n".join(f"{i}.{j}. {title}" for i in range(1, 6) for j, title in enumerate((
        "Using the Python Interpreter", "Invoking the Interpreter", "Argument Passing", "Interactive Mode"), 1))
    assert _verdict(contents, "en") == "navigation"
    poem = "\n".join(["让灯火在黎明消失吧", "这里只有树根在苏醒", "小岛守着它琥珀色的孤独", "乡愁像山丘一样颤抖"] * 6)
    assert _signals(poem)["q_nav_line_frac"] < 0.5


LICENCE_EN = """Terms of use

Copyright 2019-2024 the authors of this package.
You may use, copy and change this work, provided that this notice appears in every copy.
You may not use the names of the authors to promote derived works without their written permission.
The work is provided as is, and the authors disclaim any warranty, express or implied.
In no event shall the authors be liable for any damages arising from the use of this work.
Any copy you distribute shall carry these terms and conditions unchanged.
If any part of this licence is held invalid, the remaining terms stay in force."""
LICENCE_ZH = """软件许可协议

版权所有 © 2021 本项目作者，保留所有权利。
在遵守本协议条款的前提下，您可以复制、修改和分发本软件。
您不得删除本软件中的任何版权声明或许可声明。
本软件按原样提供，作者不提供任何明示或默示的担保。
对于因使用本软件而产生的任何损失，作者不承担任何赔偿责任。
再分发本软件时，必须附带本协议的完整文本。
如本协议的任何条款被认定无效，其余条款仍然有效。"""
ABOUT_LICENCES = """Choosing a licence

Most of the programs in the archive come with their source code, and the licence that covers each one is
recorded beside it. Before you add a package, read how its authors let others use it. Some licences ask
only that the copyright notice stays in place, others ask that changed versions are shared under the
same terms.

The tools described in this chapter check the recorded licences of every package against the list of
licences the project accepts. They report the packages that need a closer look. They do not decide for
you; a person still reads each report and talks with the authors when something is unclear."""
COPYRIGHT_CASE_EN = """A court in San Francisco ruled on Tuesday that a photo agency had not proved its case against a magazine.
The agency said the magazine printed eleven of its pictures in a travel feature without asking first.
Lawyers for the magazine argued that the pictures were used under an agreement signed in 2019.
The judge agreed, and said the agency's claim for damages of two million dollars could not go forward.
"We have always defended the copyright of our photographers, and we will do so again," its chief said.
Legal experts said the ruling could make such suits harder to win.
The appeal is expected to be heard next year."""
COPYRIGHT_CASE_ZH = """本报讯 记者昨日从市中级人民法院获悉，一起涉及网络文学作品的著作权纠纷案一审宣判。
原告是一名网络小说作者，他发现自己的作品被一家网站未经许可全文转载，点击量超过百万。
法院审理认为，被告网站的行为侵犯了原告的信息网络传播权，判决被告停止侵权并赔偿经济损失五万元。
被告当庭表示将提起上诉。
法官在庭后接受采访时说，近年来此类案件数量明显增加，网络平台应当加强内容审核。
业内人士认为，这一判决对规范网络转载行为具有示范意义。
据了解，该院今年已审结知识产权案件三百余件。"""


SAFETY_NEWS_ZH = """本报讯 市安监局昨日召开全市安全生产工作会议，部署今冬明春的安全生产工作。
会议要求，各企业必须落实安全生产主体责任，任何单位不得以任何理由降低安全标准。
对发生事故的企业，有关部门应当依法追究责任，并督促其对受害者给予赔偿。
会议还通报了今年以来的安全生产情况，全市事故起数和死亡人数同比分别下降一成以上。
市安监局负责人表示，冬季是火灾和交通事故的多发期，各区县必须加强巡查。
下一步，全市将开展为期三个月的安全隐患大排查。
版权所有 © 本报社 未经许可不得转载"""
PERMISSIONS_EN = """Every file has three sets of permission bits, for its owner, its group and everyone else.
Any user may read a file whose read bit is set for them, and may not change it without the write bit.
Such bits are shown by ls -l as a string like rw-r--r--, one letter for each permission.
The chmod command changes them, and only the owner or the superuser may run it on a file.
A directory needs the execute bit before any user may enter it, whatever its other bits say.
Permissions without the sticky bit let any user who may write to a directory remove its files.
Copyright 2024 the authors. License GPLv3+: GNU GPL version 3 or later."""


def test_licence_pages_are_dropped_and_writing_about_licences_is_kept():
    assert _verdict(LICENCE_EN, "en") == "licence_page"
    assert _verdict(LICENCE_ZH, "zh") == "licence_page"
    for text, lang in ((ABOUT_LICENCES, "en"), (COPYRIGHT_CASE_EN, "en"), (COPYRIGHT_CASE_ZH, "zh"),
                       (EN_PARAGRAPH, "en"), (TECH_EN, "en"), (SAFETY_NEWS_ZH, "zh"), (PERMISSIONS_EN, "en")):
        assert _verdict(text, lang) is None, text[:40]
    assert _signals(EN_PARAGRAPH)["q_licence_sentence_frac"] == 0.0
    notice_only = "\n".join(LICENCE_EN.splitlines()[:4])  # too few sentences to judge
    assert _signals(notice_only)["q_licence_sentence_frac"] == 0.0


def test_box_drawn_tables_are_not_symbol_runs():
    table = "┌────────┬────────┐\n│级别    │说明    │\n├────────┼────────┤\n│0       │系统不可用│\n└────────┴────────┘"
    text = ZH_PARAGRAPH + "\n" + table
    assert _signals(text)["q_symbol_run_frac"] == 0.0 and _signals(text)["q_decorative_frac"] == 0.0


# --- repair -----------------------------------------------------------------------------

def test_repair_fixes_mojibake_and_keeps_cjk_punctuation():
    original = "中文标点，！？：；（）都应保留。Café naïve “quotes”."
    assert repair(original.encode("utf-8").decode("latin-1")) == original
    western = "Café naïve résumé – done"
    assert repair(western.encode("utf-8").decode("cp1252")) == western
    assert repair("全角，！？：；（）ＡＢＣ") == "全角，！？：；（）ＡＢＣ"


def test_a_closing_quote_that_lost_a_byte_stays_debris_and_its_document_is_dropped():
    # ” is E2 80 9D; cp1252 has no 9D, so a lossy copy reads "â€" and ftfy would guess a dagger (E2 80 A0)
    lossy = EN_PARAGRAPH.replace("the", "the â€œcoreâ€", 3)
    assert "\u2020" not in repair(lossy) and "â€ " in repair(lossy)
    assert _signals(repair(lossy))["q_mojibake_marks"] > 0
    assert repair("a daggerâ€\xa0here and “quotesâ€\x9d there") == "a dagger†here and “quotes” there"  # nothing lost
    assert repair("Smith† and Jones‡ are co-authors.") == "Smith† and Jones‡ are co-authors."


def test_skipping_ftfy_never_changes_the_output():
    rng = random.Random(11)
    ranges = [(0x20, 0x7E), (0x2010, 0x2027), (0x3000, 0x303F), (0x3040, 0x30FF), (0x4E00, 0x9FFF),
              (0xAC00, 0xD7A3), (0xFF01, 0xFFEE), (0xA0, 0xFF), (0x2030, 0x20AC), (9, 10)]
    skipped = 0
    for _ in range(30000):
        text = "".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(rng.randint(1, 30)))
        repaired = repair(text)
        skipped += repaired is text  # the scan found nothing for ftfy
        assert repaired == ftfy.fix_text(text, config=FTFY_CONFIG), ascii(text)
    assert skipped > 1000
    for text in (ZH_PARAGRAPH, EN_PARAGRAPH, POEM_ZH, TECH_EN):
        assert repair(text) == ftfy.fix_text(text, config=FTFY_CONFIG)


def test_a_line_longer_than_ftfys_pieces_is_repaired_as_ftfy_repairs_it():
    # ftfy tests each 1,000,000-character piece of the line for mojibake; "Ã " is bad at a piece's start
    for head in ("1", "中"):
        text = head * FTFY_CONFIG.max_decode_length + "Ã la mode\n"
        repaired = repair(text)
        assert repaired == ftfy.fix_text(text, config=FTFY_CONFIG) and repaired.endswith("à la mode\n")


def test_line_by_line_repair_equals_ftfy_on_the_whole_text():
    rng = random.Random(5)
    pieces = ["abc ", "中文", "\n", "\r\n", "\r", "&amp;", "<b>", "Ã©", "â€œ", "\u2028", "\x85", "é", "\u0301",
              "ﬁ", "\ufffd", "  ", "\t", "&lt;", "\n\n", "Ã¤Â¸Â­", "→", "■", "Привет", "Ð¿Ñ€Ð¸", "─┼", "\ufeff",
              "\u206a", "\x1b[31m", "\ud83d", "\x00", "\x0c", "Â ", "naïve", "×²", "ĳ", "ＡＢ", "Ã"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
        assert repair(text) == ftfy.fix_text(text, config=FTFY_CONFIG), ascii(text)


# --- language ID ------------------------------------------------------------------------

def test_the_bundled_model_is_loaded_with_the_real_fasttext():
    import fasttext

    assert bundled_model_path().name == "lid.176.ftz" and bundled_model_path().is_file()
    assert hasattr(fasttext, "train_supervised"), "fasttext-predict's module has replaced fasttext 0.9.3"
    assert np.__version__.startswith("2.")
    (guess,) = identify([EN_PARAGRAPH], None)
    assert guess.lang == "en" and guess.score > 0.9


def test_han_only_poems_are_chinese_and_code_lines_are_ignored():
    guesses = identify([POEM_ZH, "春眠不觉晓\n处处闻啼鸟\n夜来风雨声\n花落知多少", TECH_EN, ZH_PARAGRAPH], None)
    assert [accepted_language(g, CFG.lid) for g in guesses] == ["zh", "zh", "en", "zh"]
    assert "import json" not in prose_lines(TECH_EN)


MAN_PAGE = (
    "rtnetlink(7)            Miscellaneous Information Manual            rtnetlink(7)\n\nNAME\n"
    "       rtnetlink - Linux routing socket\n\nSYNOPSIS\n       #include <asm/types.h>\n"
    "       #include <linux/rtnetlink.h>\n\n       rtnetlink_socket = socket(AF_NETLINK, int socket_type, "
    "NETLINK_ROUTE);\n\nDESCRIPTION\n       Rtnetlink  allows the kernel's routing tables to be read and "
    "altered.  It\n       is used within the kernel  to  communicate  between  various  subsystems,\n"
    "       though  this  usage  is  not  documented here, and for communication with\n       user-space "
    "programs.  Network  routes,  IP  addresses,  link  parameters,\n       neighbor setups, queueing "
    "disciplines, traffic classes and packet classi‐\n       fiers may all be controlled through "
    "NETLINK_ROUTE sockets.\n\n           struct rtattr {\n               unsigned short rta_len;\n"
    "           };\n")
ZH_MAN_PAGE = ("APM(1)\n\nNAME\n       apm - 查询高级电源管理(APM) BIOS\n\n总览\n       apm [ -VvmMsSdin ]\n\n描述\n"
               "       apm     读取     /proc/apm     并用人能看懂的格式输出。因为提供了首要的\n"
               "       电池状态，这个命令在有兼容的  APM  BIOS  的笔记本电脑上非常有用。   apm\n"
               "       允许使机器进入等待或挂起模式。\n\n选项\n       -V, --version\n"
               "              输出 apm 程序的版本并立即退出。\n       -v, --verbose\n"
               "              输出关于 APM BIOS 的版本和 Linux APM 驱动程序的版本的信息。\n")


def test_language_id_reads_the_prose_of_man_pages():
    assert "#include" not in prose_lines(MAN_PAGE) and "classifiers" in prose_lines(MAN_PAGE)
    assert "--verbose" not in prose_lines(ZH_MAN_PAGE) and "笔记本电脑" in prose_lines(ZH_MAN_PAGE)
    assert [accepted_language(g, CFG.lid) for g in identify([MAN_PAGE, ZH_MAN_PAGE], None)] == ["en", "zh"]


def test_a_clear_lead_below_the_threshold_is_accepted_and_a_spread_is_not():
    lead = LangGuess("en", 0.45, {"en": 0.45, "te": 0.034, "si": 0.024})
    spread = LangGuess("en", 0.45, {"en": 0.45, "de": 0.2, "nl": 0.1})
    assert accepted_language(lead, CFG.lid) == "en"
    assert accepted_language(spread, CFG.lid) is None
    assert accepted_language(LangGuess("fr", 0.9, {"fr": 0.9, "en": 0.05}), CFG.lid) is None


CODE_EXAMPLE_EN = (
    "Examples\n\nBuilding a config:\n\ncfg = dict(\n    aName = \"shard\",\n    aList = [\"x\", \"y\", 7, 2.5],\n"
    "    aRatio = 0.25,\n    aCount = 512,\n    nested = dict(\n        label = \"<a & b>\",\n        flag = True,\n    ),\n"
    "    blob = b\"<raw bytes>\" * 4,\n)\nwith open(path, 'wb') as fh:\n    save(cfg, fh)\n\nReading a config:\n\n"
    "with open(path, 'rb') as fh:\n    cfg = load(fh)\nprint(cfg[\"aName\"])")
IDENTIFIERS = "\n".join(["pq_getlength pq_getvalue pq_nfields PGresult PGRES_FATAL_ERROR row_number column_number"] * 5)


def test_a_page_of_code_with_english_function_words_is_english_and_a_list_of_identifiers_is_not():
    """lid.176 gives the code example en 0.25 with the rest spread over tl, vi, ...; its function words (a, as,
    with) say English. The identifiers have none."""
    assert [accepted_language(g, CFG.lid) for g in identify([CODE_EXAMPLE_EN, IDENTIFIERS], None)] == [None, None]
    assert [d.accepted for d in decide_languages([CODE_EXAMPLE_EN, IDENTIFIERS], CFG.lid)] == [True, False]
    off = CFG.lid.replace(en_min_function_words=None)
    assert [d.accepted for d in decide_languages([CODE_EXAMPLE_EN], off)] == [False]


def test_other_languages_are_not_accepted():
    texts = ["Le fleuve Yangtsé est le plus long fleuve d'Asie et traverse toute la Chine.",
             "今日はとても良い天気なので、公園まで散歩に行きましょう。",
             "Река Янцзы является самой длинной рекой в Азии и протекает через весь Китай."]
    assert [accepted_language(g, CFG.lid) for g in identify(texts, None)] == [None, None, None]


# Article 1 of the Universal Declaration of Human Rights in the United Nations' published translations, by script.
UDHR_ARTICLE_1 = {
    "Deva": "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है। उन्हें बुद्धि और "
            "अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए।",
    "Deva/mr": "सर्व मानवी व्यक्ति जन्मतःच स्वतंत्र आहेत व त्यांना समान प्रतिष्ठा व समान अधिकार आहेत. त्यांना विचारशक्ति व "
               "सदसद्विवेकबुद्धि लाभलेली आहे व त्यांनी एकमेकांशी बंधुत्वाच्या भावनेने आचरण करावे.",
    "Taml": "மனிதப் பிறவியினர் சகலரும் சுதந்திரமாகவே பிறக்கின்றனர்; அவர்கள் மதிப்பிலும், உரிமைகளிலும் சமமானவர்கள், "
            "அவர்கள் நியாயத்தையும் மனச்சாட்சியையும் இயற்பண்பாகப் பெற்றவர்கள். அவர்கள் ஒருவருடனொருவர் சகோதர "
            "உணர்வுப் பாங்கில் நடந்துகொள்ளல் வேண்டும்.",
    "Telu": "ప్రతిపత్తిస్వత్వముల విషయమున మానవులెల్లరును జన్మతః స్వతంత్రులును సమానులును నగుదురు. వారు "
            "వివేకాంతఃకరణ సంపన్నులగుటచే పరస్పరము భ్రాతృభావముతో వర్తింపవలయును.",
    "Beng": "সমস্ত মানুষ স্বাধীনভাবে সমান মর্যাদা এবং অধিকার নিয়ে জন্মগ্রহণ করে। তাঁদের বিবেক এবং বুদ্ধি আছে; "
            "সুতরাং সকলেরই একে অপরের প্রতি ভ্রাতৃত্বসুলভ মনোভাব নিয়ে আচরণ করা উচিত।",
    "Thai": "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม "
            "และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ",
    "Arab": "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل بعضهم "
            "بعضًا بروح الإخاء.",
    "Hebr": "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם "
            "לנהוג איש ברעהו ברוח של אחוה.",
    "Cyrl": "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и "
            "совестью и должны поступать в отношении друг друга в духе братства.",
    "Grek": "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι "
            "προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.",
    "Hang": "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 "
            "부여받았으며 서로 형제애의 정신으로 행동하여야 한다.",
    "Hira": "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心と"
            "を授けられており、互いに同胞の精神をもって行動しなければならない。",
}


@pytest.mark.parametrize("script", sorted(UDHR_ARTICLE_1))
def test_text_in_a_script_no_target_language_uses_is_dropped_for_its_language(script: str):
    """Whatever fastText's top label: the letters are mostly in a script neither zh nor en is written in."""
    text = "\n\n".join([UDHR_ARTICLE_1[script]] * 3)
    [decision] = decide_languages([text], CFG.lid)
    assert not decision.accepted
    assert decision.lang not in CFG.lid.thresholds
    assert decision.detail.startswith(f"script {script.split('/')[0]}: ")


def test_documents_in_target_scripts_quoting_another_script_go_on_to_fasttext():
    english = EN_PARAGRAPH + "\n\nThe declaration opens, in Russian: " + UDHR_ARTICLE_1["Cyrl"]
    chinese = ZH_PARAGRAPH + "\n日文译本的第一条是：" + UDHR_ARTICLE_1["Hira"][:40]
    decisions = decide_languages([english, chinese, POEM_ZH, TECH_EN, MAN_PAGE], CFG.lid)
    assert [d.lang for d in decisions] == ["en", "zh", "zh", "en", "en"]
    assert all(d.accepted for d in decisions)


def test_an_unknown_script_code_is_a_clear_error():
    lid = CFG.lid.replace(scripts={"zh": ["Hani"], "en": ["Latin"]})
    with pytest.raises(ConfigError, match="clean.lid.scripts: Latin is not a script code"):
        decide_languages([EN_PARAGRAPH], lid)
    with pytest.raises(ConfigError, match="scripts has no entry for fr"):
        load_config(overrides=["clean.lid.thresholds={zh: 0.5, en: 0.65, fr: 0.6}"])


def test_a_missing_model_file_is_a_clear_error(tmp_path):
    with pytest.raises(KilnError, match="not found"):
        identify(["text"], str(tmp_path / "nope.ftz"))


# --- a batch through the stage function ---------------------------------------------------

def test_clean_batch_keeps_drops_and_records():
    texts = [ZH_PARAGRAPH + "\n发布时间：2023-05-01 10:00", EN_PARAGRAPH, "Bonjour à tous, ceci est un texte français assez long pour la détection.", "Hi."]
    n = len(texts)
    batch = pa.RecordBatch.from_arrays(
        [pa.array(range(n), pa.int64()), pa.array([f"s{i}" for i in range(n)]), pa.array(texts, pa.large_string()),
         pa.array(["src"] * n), category_array(["news"] * n), pa.array([None] * n, pa.string()),
         pa.array([None] * n, pa.float32()), pa.array(["{}"] * n)],
        schema=DOC_SCHEMA,
    )
    kept, dropped, stats, _ = clean_batch(batch, CFG)
    assert kept.column("source_id").to_pylist() == ["s0", "s1"]
    assert kept.column("text")[0].as_py() == ZH_PARAGRAPH
    assert kept.column("meta")[0].as_py() == '{"timestamps_removed": 1}'
    assert kept.column("lang").to_pylist() == ["zh", "en"]
    assert set(dropped) == {"lang"}  # language ID comes first: "Hi." has no language it is sure of
    assert "fr=" in dropped["lang"].column("signal")[0].as_py()
    assert sum(stats["dropped_by_rule_lang"]["lang"].values()) == 2
    assert stats["timestamp_spans_removed"] == 1
    assert kept.schema.names[-len(SIGNAL_NAMES):] == list(SIGNAL_NAMES)
