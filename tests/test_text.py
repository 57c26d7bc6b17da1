"""Dedup text helpers: normalization, tokens, shingles, Jaccard."""

from common.text import dedup_normalize, dedup_tokens, jaccard, shingles


def test_han_characters_are_single_tokens():
    assert dedup_tokens("中文分词") == ["中", "文", "分", "词"]


def test_extension_a_and_compatibility_ideographs_are_han_tokens():
    assert dedup_tokens("\u3400\u3401") == ["\u3400", "\u3401"]
    assert dedup_tokens("\uf900\u4e00") == ["\u8c48", "\u4e00"]


def test_latin_words_are_tokens_and_punctuation_is_dropped():
    assert dedup_tokens("Hello, World! It's fine.") == ["hello", "world", "it", "s", "fine"]
    assert dedup_tokens("，。！？…—“”（）★★") == []


def test_mixed_scripts_split_at_han_characters():
    assert dedup_tokens("我爱Python3编程") == ["我", "爱", "python0", "编", "程"]


def test_nfkc_lowercase_and_digit_mapping():
    assert dedup_tokens("ＡＢＣ１２３ ﬁne") == ["abc000", "fine"]
    assert dedup_tokens("2023年5月") == ["0000", "年", "0", "月"]
    assert dedup_normalize("Hello,   World!! 42") == "hello world 00"
    assert dedup_normalize("snake_case\tand\nlines") == "snake case and lines"


def test_normalized_text_and_tokens_agree():
    text = "Über 3 Äpfel — 苹果，共３个!"
    assert dedup_tokens(dedup_normalize(text)) == dedup_tokens(text)


def test_shingles():
    tokens = ["a", "b", "c", "d", "e", "f"]
    assert shingles(tokens) == {"a b c d e", "b c d e f"}
    assert shingles(tokens, k=2) == {"a b", "b c", "c d", "d e", "e f"}
    assert shingles(["a", "b", "c"]) == {"a b c"}
    assert shingles([]) == set()


def test_jaccard():
    assert jaccard({"a", "b"}, {"a", "b"}) == 1.0
    assert jaccard({"a"}, {"b"}) == 0.0
    assert jaccard({"a", "b", "c"}, {"b", "c", "d"}) == 0.5
    assert jaccard(set(), set()) == 0.0
