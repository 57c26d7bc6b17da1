"""Licence pages: how much of a document is written in the language of a licence or legal notice.

A licence, copyright notice or terms-of-use page grants, conditions and disclaims in nearly every
sentence (a line break ends one too): a licence noun (licence, copyright, warranty, liability;
许可, 授权, 版权, 担保) beside the register of a legal text (shall, hereby, provided that, subject to, you may,
any, such; 必须, 不得, 条款, 任何). Prose that discusses licences, or a news report on a copyright
case, names them in a few sentences and tells a story in the rest. The words are English and
Chinese; documents in other languages score 0.
"""

from __future__ import annotations

import re

from stages.clean.textsets import HAN_CLASS

LICENCE_NOUNS = ("licen", "copyright", "warrant", "liab", "royalt", "infring", "damages", "patent", "trademark",
                 "许可", "授权", "版权", "著作权", "担保", "专利", "商标", "侵权", "免责", "赔偿责任")
# (The English nouns are read at a word's start: "reliable" holds no liability.)
LEGAL_REGISTER_PHRASES = ("shall", "hereby", "herein", "thereof", "therein", "thereto", "hereunder", "whereas",
                          "pursuant", "notwithstanding", "provided that", "provided the", "subject to", "you may",
                          "you must", "may not", "must not", "terms", "conditions", "notice", "without",
                          "必须", "不得", "应当", "条款", "您可以", "允许", "任何", "条件", "声明", "本协议", "本许可",
                          "本授权", "本软件")
LEGAL_REGISTER_WORDS = ("any", "such")  # whole words only ("many", "anyone" are not legal register)
# A text scores above 0 only if it names a licence or a copyright: one of these, as written.
HINTS = ("icen", "ICEN", "opyright", "OPYRIGHT", "许可", "授权", "版权", "著作权")
MIN_SENTENCES = 6
"""Documents with fewer sentences (of MIN_SENTENCE_WORDS words or more) score 0: too little to judge."""
MIN_SENTENCE_WORDS = 4

# Permission as the consent a licence grants or withholds, not the permissions of a file.
PERMISSION = (r"(?:grant(?:s|ed)?|give[sn]?|ask(?:s|ed)?(?: for)?|obtain(?:s|ed)?|written|prior|express|without) "
              r"permission|permission (?:is|to|notice|of|from)")
NOUN_RE = re.compile("|".join((PERMISSION, *(re.escape(noun) if not noun.isascii() else rf"\b{noun}"
                                             for noun in LICENCE_NOUNS))))
REGISTER_RE = re.compile("|".join((*map(re.escape, LEGAL_REGISTER_PHRASES),
                                   *(rf"\b{word}\b" for word in LEGAL_REGISTER_WORDS))))
SENTENCE_END_RE = re.compile(r"(?<=[.;!?])\s+|[。；！？\n]+")
WORD_RE = re.compile(rf"[{HAN_CLASS}]|[a-z]+")


def licence_sentence_frac(text: str) -> float:
    """Share of the sentences (a line break ends one too) that hold both a licence noun and legal register, in a text that names a
    licence or a copyright (HINTS) and has MIN_SENTENCES sentences or more (else 0)."""
    if not any(hint in text for hint in HINTS):
        return 0.0
    sentences = [s for s in SENTENCE_END_RE.split(text.lower()) if len(WORD_RE.findall(s)) >= MIN_SENTENCE_WORDS]
    if len(sentences) < MIN_SENTENCES:
        return 0.0
    legal = sum(1 for s in sentences if NOUN_RE.search(s) and REGISTER_RE.search(s))
    return legal / len(sentences)
