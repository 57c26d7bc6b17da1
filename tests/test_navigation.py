"""The navigation signal: index, contents, module-index and menu pages score high, in English and
Chinese; clean documents of every genre (prose, man pages, API references, verse, quotations,
dialogue, code, tables) score low. The rule drops a document above 0.85."""

from __future__ import annotations

import pytest

from stages.clean.batch_text import BatchText
from stages.clean.navigation import MIN_NAV_LINES, line_kinds
from stages.clean.signals import compute_signals
from tests.navigation_reference import line_kind

THRESHOLD = 0.85


def nav_line_frac(lines: list[str]) -> float:
    """The stage's q_nav_line_frac of a document made of ``lines``."""
    return float(compute_signals(["\n".join(lines)])["q_nav_line_frac"][0])


def _score(text: str) -> float:
    lines = [line.strip() for line in text.split("\n")]
    lines = [line for line in lines if line]
    assert len(lines) >= MIN_NAV_LINES, "a test page must be long enough to be scored"
    return nav_line_frac(lines)


def _entry(line: str) -> bool:
    return nav_line_frac([line] * MIN_NAV_LINES) == 1.0


# --- navigation pages --------------------------------------------------------------------

GENERAL_INDEX = """Index – F
fabs() (in module math)
factorial() (in module math)
fail() (unittest.TestCase method)
False, [1], [2], [3]
family (socket.socket attribute)
fchmod() (in module os)
feature_external_ges (in module xml.sax.handler)
fetch() (imaplib.IMAP4 method)
field_size_limit() (in module csv)
file object, [1]
io module
open() built-in function, [1]
file_open() (urllib.request.FileHandler method)
! (exclamation)
in glob-style wildcards, [1]
. (dot)
...
--with-openssl
filter() (built-in function)
finalize (class in weakref)
find() (str method)"""

MODULE_INDEX = """Python Module Index
_ | a | b | c | d | e | f | g | h | i | j | k | l | m
a
abc Abstract base classes according to :pep:`3119`.
aifcDeprecated: Read and write audio files in AIFF or AIFC format.
argparse Command-line option and argument parsing library.
array Space efficient arrays of uniformly typed numeric values.
ast Abstract Syntax Tree classes and manipulation.
asyncio Asynchronous I/O.
atexit Register and execute cleanup functions.
b
base64 RFC 4648: Base16, Base32, Base64 Data Encodings; Base85 and Ascii85
bdb Debugger framework.
binascii Tools for converting between binary and various ASCII-encoded binary representations.
bisect Array bisection algorithms for binary searching.
builtins The module that provides the built-in namespace.
c
curses (Unix) An interface to the curses library, providing portable terminal handling.
dbm.gnu (Unix) GNU's reinterpretation of dbm.
heapq Heap queue algorithm (a.k.a. priority queue).
math Mathematical functions (sin() etc.)."""

CONTENTS_WITH_INTRODUCTION = """The Language Reference
This reference manual describes the syntax and core semantics of the language. It is terse, but attempts to be \
exact and complete. For an informal introduction to the language, see the tutorial.
1. Introduction
1.1. Alternate Implementations
1.2. Notation
2. Lexical analysis
2.1. Line structure
2.3. Identifiers and keywords
3. Data model
3.1. Objects, values and types
3.2. The standard type hierarchy
4. Execution model
4.1. Structure of a program
4.2. Naming and binding
4.3. Exceptions
5. The import system
5.1. importlib
5.2. Packages
5.8. Special considerations for __main__
6. Expressions
6.4. Await expression
6.10. Comparisons
6.17. Operator precedence
7. Simple statements
7.1. Expression statements"""

SHORT_CONTENTS = """Frequently Asked Questions
General FAQ
Programming FAQ
Design and History FAQ
Library and Extension FAQ
Extending/Embedding FAQ
FAQ on Windows
Graphic User Interface FAQ
"Why is Python Installed on my Computer?" FAQ"""

CHAPTER_CONTENTS = """Internationalization
The modules described in this chapter help you write software that is independent of language and locale by \
providing mechanisms for selecting a language to be used in program messages.
The list of modules described in this chapter is:
gettext — Multilingual internationalization services
GNU gettext API
Class-based API
The NullTranslations class
The GNUTranslations class
Solaris message catalog support
The Catalog constructor
Localizing your module
Localizing your application
Changing languages on the fly
Deferred translations
Acknowledgements
Examples
Functions
Constants
Message catalogs
locale — Internationalization services
Background, details, hints, tips and caveats
Access to message catalogs"""

SITE_ARCHIVE = """Home | Blog | Projects | About | Contact
Archive
Posts by year
2023
Writing a Tiny Forth in Rust
Notes on Property Testing
What I Learned from Profiling Allocators
Sourdough Notes
Shipping a Static Site Generator
Fuzzing the Parser
2022
A Field Guide to Linker Errors
Building a Keyboard from Scratch
Debugging Flaky Tests
Notes from the Field
Reading List
Tags
rust · testing · compilers · hardware
Previous | Next | Top"""

ZH_CONTENTS = """目录
第一章 总则
第二章 安装
2.1 系统要求
2.2 获取源代码
2.3 编译与安装
第三章 配置
3.1 配置文件格式
3.2 环境变量
3.3 日志设置
第四章 常见问题
附录 A 术语表
附录 B 索引"""

ZH_MODULE_INDEX = """Python 模块索引
a | b | c | d | e | f | g
abc —— 抽象基类
argparse —— 命令行选项、参数和子命令解析器
array —— 高效的数值数组
ast —— 抽象语法树
asyncio —— 异步 I/O
atexit —— 退出处理器
base64 —— Base16, Base32, Base64, Base85 数据编码
bisect —— 数组二分查找算法
builtins —— 内建对象
calendar —— 日历相关函数
cmath —— 关于复数的数学函数
collections —— 容器数据类型"""


@pytest.mark.parametrize("page", [GENERAL_INDEX, MODULE_INDEX, CONTENTS_WITH_INTRODUCTION, SHORT_CONTENTS,
                                  CHAPTER_CONTENTS, SITE_ARCHIVE, ZH_CONTENTS, ZH_MODULE_INDEX],
                         ids=["general-index", "module-index", "contents-with-introduction", "short-contents",
                              "chapter-contents", "site-archive", "zh-contents", "zh-module-index"])
def test_index_contents_and_menu_pages_score_high(page):
    assert _score(page) > THRESHOLD


@pytest.mark.parametrize("line", [
    "fill() (in module textwrap)", "bytes, [1], [2]", "Apple, 12, 45-47", "7.5.1. Basic fonts",
    "Porting Extension Modules to Python 3", "Instrumenting CPython with DTrace and SystemTap",
    "Comparison with marshal", "What I Learned from Profiling Allocators", "textwrap — Text wrapping and filling", "abc —— 抽象基类", "abc——抽象基类",
    "argparse Command-line option and argument parsing library.", "curses (Unix) An interface to the curses library",
    "Home | News | Sport | Weather", "•  Getting started", "第三章 配置", "! (exclamation)",
    # numbered headings: letters and Roman numerals, a word before the number, questions, sentence case
    "B.2.6. Using a DHCP server to specify preconfiguration files", "A. Error Codes", "IV. Client Interfaces",
    "Chapter 3. Before Installing the System", "Part VIII. Appendixes", "附录 B. 使用预置自动进行安装",
    "1.2. What is this manual about?", "3.2. Back Up Your Existing Data!", "1.3. 好的，我知道了……什么是内核？！",
    # index entries: terms and the sections they point to, apart by commas
    "ALTER TABLE, ALTER TABLE", "array_agg, Aggregate Functions, Functions", "arithmetic, shell: Shell Arithmetic",
    "--help",  # an option alone: an index entry
])
def test_what_an_entry_is(line):
    assert _entry(line)


@pytest.mark.parametrize("line", [
    "The rpc file contains user readable names that can be used in place of",  # wrapped prose
    "of the line are not interpreted by routines which search the file.",
    "Delight is a late shore", "We carried love across the ash",  # verse
    "A: can you write a static method?", "B: I am doing well, thank you.",
    "abc The environment where code runs. It covers interfaces.",  # two sentences are not a description
    "the Python interpreter reads them",  # a function word is no identifier
    "w3m    V:14, I:190   2828   html→text",  # a table row
    "南京－２．４－３．８－０．２",  # figures
    "x = compute(value)", "$ ls -l mypipe", "| assert_stmt", "@property",  # code
    "这里有一个配置的例子", "床前明月光，疑是地上霜。",
    "mkdir -p data", "tar -xf archive.tar", "./configure --prefix", "chown user /srv/data",  # command lines
    "1907 It satisfies the thirst and pleases the palate",  # a year is no section number
    "2. Open the file and read every line.", "B.1. First this. Then that",  # numbered sentences
    "I think we should go", "Well, I do not know what to say",
])
def test_what_an_entry_is_not(line):
    assert not _entry(line)


def test_lead_ins_and_borders_are_not_counted():
    listing = ["asyncio — Asynchronous I/O", "socket — Low-level networking interface"] * 4
    assert nav_line_frac(["The list of modules is:", *listing]) == 1.0
    assert nav_line_frac(["│", "┌──────┐", *listing]) == 1.0
    assert nav_line_frac(["if x == 1:", *listing]) < 1.0  # a line of code ending with ":" is code, not a lead-in


def test_fewer_than_min_nav_lines_score_zero():
    entries = [f"{i}. Chapter {i}" for i in range(1, MIN_NAV_LINES)]
    assert nav_line_frac(entries) == 0.0
    assert nav_line_frac([*entries, "Index"]) == 1.0
    assert nav_line_frac([*entries, "Lead-in:"]) == 0.0  # what is not counted does not make up the number
    assert nav_line_frac([]) == 0.0


# --- clean documents ---------------------------------------------------------------------

EN_PROSE = """Chapter One
The river had been rising for three days before anyone in the village thought to move the boats.
By the fourth morning the water had reached the church steps, and the old men gathered there to argue.
Some said it would fall by nightfall; others remembered the flood of their childhood and said nothing.
Maria listened from the doorway of the bakery, flour on her hands, counting the sandbags.
When the bell rang at noon she closed the shop, took her brother by the hand and walked uphill.
Nobody followed them at first. Then, one by one, the doors along the lane began to open.
By evening the square was empty, and the river was louder than the wind.
She did not look back until they reached the orchard wall."""

MAN_PAGE = """LS(1)                            User Commands                           LS(1)
NAME
ls - list directory contents
SYNOPSIS
ls [OPTION]... [FILE]...
DESCRIPTION
List  information  about  the FILEs (the current directory by default).
Sort entries alphabetically if none of -cftuvSUX nor --sort is specified.
Mandatory arguments to long options are mandatory for short options too.
-a, --all
do not ignore entries starting with .
-A, --almost-all
do not list implied . and ..
--author
with -l, print the author of each file
-b, --escape
print C-style escapes for nongraphic characters
--block-size=SIZE
with -l, scale sizes by SIZE when printing them
-B, --ignore-backups
do not list implied entries ending with ~
-c     with -lt: sort by, and show, ctime (time of last change of file status
information); with -l: show ctime and sort by name; otherwise: sort by ctime
SEE ALSO
dircolors(1)
GNU coreutils 9.1                  September 2022                          LS(1)"""

API_REFERENCE = """textwrap — Text wrapping and filling
The textwrap module provides some convenience functions, as well as TextWrapper, the class that does all the work.
textwrap.wrap(text, width=70, *, initial_indent='', subsequent_indent='')
Wraps the single paragraph in text so every line is at most width characters long.
Returns a list of output lines, without final newlines.
textwrap.fill(text, width=70, **kwargs)
Wraps the single paragraph in text, and returns a single string containing the wrapped paragraph.
textwrap.shorten(text, width, **kwargs)
Collapse and truncate the given text to fit in the given width.
textwrap.dedent(text)
Remove any common leading whitespace from every line in text.
textwrap.indent(text, prefix, predicate=None)
Add prefix to the beginning of selected lines in text.
class textwrap.TextWrapper(**kwargs)
The TextWrapper constructor accepts a number of optional keyword arguments.
width
(default: 70) The maximum length of wrapped lines.
expand_tabs
(default: True) If true, then all tab characters in text will be expanded to spaces.
replace_whitespace
(default: True) If true, after tab expansion each whitespace character will be replaced by a single space."""

EN_VERSE = """The Orchard Wall
The pale pine sleeps in early spring
Let the windows weep at midnight
In the evening, the dune burns
Where windows settle in emerald light
So weak, so basic, the pine
The embers remember courage
Between the road and the salt
And kindness burned like a stone
I sang beside the bronze path
We carried love across the ash
No one ran here but the lake
Delight is a late shore
Sorrow is an independent willow"""

EN_QUOTATIONS = """A man is not old until regrets take the place of dreams.
-- John Barrymore
The secret of getting ahead is getting started.
-- Mark Twain
It does not matter how slowly you go as long as you do not stop.
-- Confucius
Simplicity is prerequisite for reliability.
-- Edsger W. Dijkstra
Nothing in life is to be feared, it is only to be understood.
-- Marie Curie
Well begun is half done.
-- Aristotle"""

EN_DIALOGUE = """A: What is the rarest M&M color?
B: Brown
A: In a website browser address bar, what does "www" stand for?
B: World Wide Web
A: Do you like music
B: Yes, I listen to jazz most evenings.
A: Who wrote Hamlet
B: William Shakespeare
A: what is your favourite book
B: I have read many, but I keep coming back to the Odyssey.
A: Tell me a joke
B: Why did the scarecrow win an award? Because he was outstanding in his field."""

CODE_LISTING = """Telnet Example
A simple example illustrating typical use:
import getpass
import telnetlib
HOST = "localhost"
user = input("Enter your remote account: ")
password = getpass.getpass()
tn = telnetlib.Telnet(HOST)
tn.read_until(b"login: ")
tn.write(user.encode('ascii') + b"\\n")
if password:
tn.read_until(b"Password: ")
tn.write(password.encode('ascii') + b"\\n")
tn.write(b"ls\\n")
print(tn.read_all().decode('ascii'))"""

PACKAGE_TABLE = """11.1. Text data conversion tools
Following packages for the text data conversion caught my eyes.
Table 11.1. List of text data conversion tools
package   popcon   size   keyword   description
libc6    V:930, I:999   12977   charset   text encoding converter between locales by iconv(1)
recode    V:3, I:22   603   charset+eol   text encoding converter between locales
konwert    V:1, I:50   134   charset   text encoding converter between locales (fancy)
nkf    V:0, I:10   360   charset   character set translator for Japanese
tcs    V:0, I:0   518   charset   character set translator
unaccent    V:0, I:0   35   charset   replace accented letters by their unaccented equivalent"""

ZH_NEWS = """江泽民在全国农村工作会议上强调
加快农业和农村经济发展
本报北京１月１日讯　中共中央总书记江泽民今天在全国农村工作会议上发表重要讲话。
他指出，农业是国民经济的基础，农村稳定是全国稳定的基础。
会议认为，过去一年农业生产获得好收成，粮食总产量创历史新高。
会议要求各地继续稳定党在农村的基本政策，切实减轻农民负担。
各省、自治区、直辖市负责同志出席会议。
会议期间，代表们分组讨论了明年的农业工作安排。
（新华社记者　王某）"""

ZH_POEMS = """静夜思
李白
床前明月光，疑是地上霜。
举头望明月，低头思故乡。
春晓
孟浩然
春眠不觉晓，处处闻啼鸟。
夜来风雨声，花落知多少。
登鹳雀楼
王之涣
白日依山尽，黄河入海流。
欲穷千里目，更上一层楼。"""

ZH_SAYINGS = """对人要宽，对己要严。
——《谚语》
过头话少说，过头事少做。
——《谚语》
有麝自然香，不用大风扬。
——《谚语》
吃饭防噎，走路防跌。
——《谚语》
自夸没人爱，残花没人戴。
——《谚语》"""

ZH_DIALOGUE = """A: 你好
B: 你好，很高兴认识你。
A: 你叫什么名字
B: 我叫小明，你呢？
A: 我是小红
B: 你喜欢看书吗？
A: 喜欢
B: 你最近在读什么书？
A: 我在读《红楼梦》，写得真好。"""

ZH_FIGURES = """全国主要城市物价指数
南京－２．４－３．８－０．２
厦门－２．１－３．００．１
上海－１．２－３·１－０．１
郑州－０．７－１．８－０．４
南宁－０．６－５．３－１．１
广州－０．６－２．２－０．２
南昌－０．５－２．７－０．５
海口－０．４－３．３－１．０
（国家计委国家统计局）"""


@pytest.mark.parametrize("text", [EN_PROSE, MAN_PAGE, API_REFERENCE, EN_VERSE, EN_QUOTATIONS, EN_DIALOGUE,
                                  CODE_LISTING, PACKAGE_TABLE, ZH_NEWS, ZH_POEMS, ZH_SAYINGS, ZH_DIALOGUE,
                                  ZH_FIGURES],
                         ids=["en-prose", "man-page", "api-reference", "en-verse", "en-quotations", "en-dialogue",
                              "code-listing", "package-table", "zh-news", "zh-poems", "zh-sayings", "zh-dialogue",
                              "zh-figures"])
def test_clean_documents_score_low(text):
    assert _score(text) < 0.7


# --- the batch kernel against the per-line definition ------------------------------------

TRICKY_LINES = [
    "abc —— 抽象基类", "abc——抽象基类", "a ——— b", "term -- a description", "term --- not a dash",
    "term - one", "term -x", "term –  spaced", "Title — Two sentences. Here another.", "Is it? — yes",
    "numpyArray holds values", "_private (internal): Helper for it.", "fn(1) Something", "x (a(b)) Else",
    "dbm.gnu (Unix) GNU's reinterpretation of dbm.", "heapq Heap queue algorithm (a.k.a. priority queue).",
    "the Thing", "ab:Cd", "abc:  Def", "7.5.1. Section Title", "1.2.3 Heading", "1..2 Heading", "12 Items, 3, 4",
    "Index, [1], [2]", "Entries , 12", "Entries, 12 , 13", "Range, 45-47", "Range, 45–47", ", 12", "12",
    "Home | News | About | Contact", "Home | News. | About", "A | B", "One · Two · Three", "a |  b | c | d",
    "│ Entry ┃", "┌──┐", "• Bullet entry", "-  Spaced bullet", "*", "- ", "Porting Extension Modules to Python 3",
    "Creating Applications with zipapp", "Notes from the Field", "Comparison with marshal", "the list of it",
    "Kelvin is the unit", "İt is", "Straße und Weg", "ÉCOLE and the Town", "Ⅻ chapters", "x² and y²",
    "٣ Arabic digit heading", "١٢٣ entries", "Price 12 34 56", "fill() (in module textwrap)", "ls(1)",
    "tn.write(data)", "$ ls", "$x is", "@decorator", "|cell", "key = value", "a <b>", "#include",
    "全国主要城市物价指数", "白日依山尽，黄河入海流。", "对人要宽", "他的书", "天" * 25, "Ｔｉｔｌｅ　Ｗｏｒｄ",
    "end…", "So it goes!", "Why not?", "Done .", "(Note.)", "Wait... what", "e.g. this", "One; two",
    "word\u3000space", "tab\tseparated", "double  spaced", "trailing refs, [3]", "A—B", "A – B – C",
    "B.1. Intro", "B.1 Intro", "A.", "A. ", "AB. Title", "IVA. Title", "VIII. Title", "VIII Title", "I. e. this",
    "Chapter 3. Title", "Chapter 3 Title", "Chapter 3.1 Title", "Chapterandverse 3. Title", "Ch. 3. Title",
    "附录 B. 介绍", "附录附录附录附 B. 介绍", "3.. Title", "3.a Title", "1907 Slogan of a year", "3. Ends.",
    "3. Ends?!", "3. One. Two", "3. ?", "D.5 Concept Index", "E.1. Release 15.20", "x, y", "A, , B", "a,b, c",
    "one, two,", "Oh, well", "-p", "--help me", "---x", "-", "/usr/bin", "../up", ".../x", "~/", "a/b", "~x",
]


@pytest.mark.parametrize("lines", [TRICKY_LINES, *(text.split("\n") for text in (
    GENERAL_INDEX, MODULE_INDEX, CONTENTS_WITH_INTRODUCTION, EN_PROSE, MAN_PAGE, API_REFERENCE, EN_VERSE,
    EN_QUOTATIONS, EN_DIALOGUE, CODE_LISTING, PACKAGE_TABLE, ZH_NEWS, ZH_POEMS, ZH_SAYINGS, ZH_DIALOGUE,
    ZH_FIGURES))])
def test_the_batch_kernel_reads_every_line_as_the_definition_does(lines):
    batch = BatchText(["\n".join(lines)])
    found = batch.lines()
    kinds = line_kinds(batch, found.start, found.end).tolist()
    expected = [{True: 1, False: 0, None: -1}[line_kind(line.strip())] for line in lines if line.strip()]
    assert len(kinds) == len(expected)
    differing = [(line, kind, want) for line, kind, want in
                 zip([line.strip() for line in lines if line.strip()], kinds, expected, strict=True) if kind != want]
    assert not differing
