"""Development documents for right-to-left text in page styles the corpus does not print
(issue 24). Stdlib only.

The right-to-left family of the authored corpus is one web site's pages (React's
documentation in Arabic, Persian and Hebrew) printed in one style: one column, headings a
size step apart. Right-to-left documents are printed otherwise too: in two columns read from
the right, as reports with running headers, with bold titles at the body's size, in a sans
serif on coloured bands. The documents here are articles written from a fixed seed
(``documents``) in Persian, Arabic and Hebrew: words of each language, compounds joined by
a zero-width non-joiner (Persian), Latin terms and inline code inside the sentences, numbers
in Latin and in the language's own digits, words in parentheses and in quotation marks; a
title, sections two and three levels deep, paragraphs, a paragraph led by a bold term, bullet
and numbered lists, code, a table. Each is written as HTML (``lang`` and ``dir="rtl"``) and as
its reference Markdown (`bench.tables_web.cases`'s blocks), and printed in every style of
``STYLES``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bench.tables_web.cases import Doc, TableSpec

ZWNJ = "\u200c"


@dataclass(frozen=True)
class Language:
    code: str
    words: tuple[str, ...]
    digits: str  # the language's own digits ("" where it writes Latin ones)
    quotes: tuple[str, str]


PERSIAN = Language(
    "fa",
    (
        "برنامه",
        f"برنامه{ZWNJ}ها",
        "کاربر",
        f"کاربر{ZWNJ}ها",
        "داده",
        f"داده{ZWNJ}ها",
        "سند",
        "اسناد",
        "صفحه",
        f"صفحه{ZWNJ}ای",
        "جدول",
        "فهرست",
        "سرور",
        "درخواست",
        f"درخواست{ZWNJ}ها",
        "پاسخ",
        "تبدیل",
        "متن",
        "عنوان",
        "بخش",
        f"بخش{ZWNJ}های",
        "نسخه",
        "هزینه",
        "اعتبار",
        "حساب",
        "کلید",
        "ساختار",
        "خروجی",
        "ورودی",
        "سرعت",
        "کیفیت",
        "خطا",
        "پیام",
        "زمان",
        "روز",
        "ماه",
        "سال",
        "شرکت",
        "سازمان",
        "گزارش",
        "بررسی",
        "نتیجه",
        f"می{ZWNJ}شود",
        f"می{ZWNJ}کند",
        f"نمی{ZWNJ}شود",
        f"می{ZWNJ}توان",
        "است",
        "بود",
        "دارد",
        "باید",
        "شده",
        "کرده",
        "خوب",
        "بزرگ",
        f"بزرگ{ZWNJ}تر",
        "کوچک",
        "جدید",
        "ساده",
        "دقیق",
        f"دقیق{ZWNJ}تر",
        "سریع",
        "همه",
        "هر",
        "این",
        "آن",
        "که",
        "را",
        "با",
        "از",
        "به",
        "در",
        "برای",
        "تا",
        "و",
        "یا",
        "اما",
        "اگر",
        "چون",
        f"هم{ZWNJ}زمان",
        f"به{ZWNJ}روزرسانی",
    ),
    "۰۱۲۳۴۵۶۷۸۹",
    ("«", "»"),
)

ARABIC = Language(
    "ar",
    (
        "البرنامج",
        "المستخدم",
        "المستخدمون",
        "البيانات",
        "الوثيقة",
        "الصفحة",
        "الصفحات",
        "الجدول",
        "القائمة",
        "الخادم",
        "الطلب",
        "الطلبات",
        "الاستجابة",
        "التحويل",
        "النص",
        "العنوان",
        "القسم",
        "الإصدار",
        "التكلفة",
        "الرصيد",
        "الحساب",
        "المفتاح",
        "البنية",
        "المخرجات",
        "المدخلات",
        "السرعة",
        "الجودة",
        "الخطأ",
        "الرسالة",
        "الوقت",
        "اليوم",
        "الشهر",
        "السنة",
        "الشركة",
        "المنظمة",
        "التقرير",
        "المراجعة",
        "النتيجة",
        "يمكن",
        "يجب",
        "يعمل",
        "تعمل",
        "يستخدم",
        "تستخدم",
        "كان",
        "كانت",
        "ليس",
        "جديد",
        "كبير",
        "صغير",
        "بسيط",
        "دقيق",
        "سريع",
        "كل",
        "هذا",
        "هذه",
        "ذلك",
        "التي",
        "الذي",
        "من",
        "إلى",
        "على",
        "في",
        "عن",
        "مع",
        "أو",
        "لكن",
        "إذا",
        "لأن",
        "حتى",
        "بعد",
        "قبل",
    ),
    "٠١٢٣٤٥٦٧٨٩",
    ("«", "»"),
)

HEBREW = Language(
    "he",
    (
        "התוכנית",
        "המשתמש",
        "המשתמשים",
        "הנתונים",
        "המסמך",
        "הדף",
        "הדפים",
        "הטבלה",
        "הרשימה",
        "השרת",
        "הבקשה",
        "הבקשות",
        "התשובה",
        "ההמרה",
        "הטקסט",
        "הכותרת",
        "הפרק",
        "הגרסה",
        "העלות",
        "היתרה",
        "החשבון",
        "המפתח",
        "המבנה",
        "הפלט",
        "הקלט",
        "המהירות",
        "האיכות",
        "השגיאה",
        "ההודעה",
        "הזמן",
        "היום",
        "החודש",
        "השנה",
        "החברה",
        "הארגון",
        "הדוח",
        "הבדיקה",
        "התוצאה",
        "אפשר",
        "צריך",
        "עובד",
        "עובדת",
        "משתמש",
        "משתמשת",
        "היה",
        "הייתה",
        "אין",
        "חדש",
        "גדול",
        "קטן",
        "פשוט",
        "מדויק",
        "מהיר",
        "כל",
        "זה",
        "זאת",
        "אשר",
        "של",
        "את",
        "על",
        "עם",
        "או",
        "אבל",
        "אם",
        "כי",
        "עד",
        "אחרי",
        "לפני",
        "בתוך",
    ),
    "",
    ('"', '"'),
)

LANGUAGES = (PERSIAN, ARABIC, HEBREW)
TERMS = ("React", "API", "JSON", "PDF", "Markdown", "HTTP", "Python", "Chromium")
IDENTS = ("useState", "convert()", "page.markdown", "max_tokens", "status", "onClick")
CODE_LINES = (
    "client = Client(token)",
    "job = client.convert(path, pages=[1, 2])",
    "for page in job.pages:",
    "    print(page.markdown)",
    "const [status, setStatus] = useState('typing');",
    "ledger.hold(org, credits=4)",
)


def _number(rng: random.Random, lang: Language) -> str:
    n = str(rng.choice([rng.randint(2, 99), rng.randint(100, 2030)]))
    if lang.digits and rng.random() < 0.5:
        return n.translate(str.maketrans("0123456789", lang.digits))
    return n


def sentence(rng: random.Random, lang: Language, lo: int, hi: int) -> str:
    """Words of `lang`, now and then a Latin term, inline code, a number, or words in
    parentheses or quotation marks."""
    out: list[str] = []
    for _ in range(rng.randint(lo, hi)):
        r = rng.random()
        if r < 0.05:
            out.append(rng.choice(TERMS))
        elif r < 0.08:
            out.append(f"`{rng.choice(IDENTS)}`")
        elif r < 0.11:
            out.append(_number(rng, lang))
        elif r < 0.14:
            out.append("(" + " ".join(rng.choice(lang.words) for _ in range(rng.randint(1, 3))) + ")")
        elif r < 0.17:
            inner = " ".join(rng.choice(lang.words) for _ in range(rng.randint(1, 3)))
            out.append(lang.quotes[0] + inner + lang.quotes[1])
        elif r < 0.19:
            out.append(f"*{rng.choice(lang.words)}*")
        else:
            out.append(rng.choice(lang.words))
    return " ".join(out)


def title(rng: random.Random, lang: Language, lo: int = 2, hi: int = 5) -> str:
    return " ".join(rng.choice(lang.words) for _ in range(rng.randint(lo, hi)))


def paragraph(rng: random.Random, lang: Language, lo: int = 2, hi: int = 4) -> str:
    stop = "؛" if lang.code != "he" else ";"
    sentences = [sentence(rng, lang, 8, 20) + rng.choice([".", ".", ".", stop, "؟" if lang.code != "he" else "?"])]
    sentences += [sentence(rng, lang, 8, 20) + "." for _ in range(rng.randint(lo, hi) - 1)]
    return " ".join(sentences)


def _blocks(rng: random.Random, lang: Language, depth: int) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [("p", paragraph(rng, lang))]
    r = rng.random()
    if r < 0.22:
        out.append(("ul", [sentence(rng, lang, 3, 14) for _ in range(rng.randint(3, 5))]))
    elif r < 0.4:
        out.append(("ol", [sentence(rng, lang, 6, 18) for _ in range(rng.randint(3, 4))]))
    elif r < 0.5:
        out.append(("code", "\n".join(rng.sample(CODE_LINES, rng.randint(2, 4)))))
    if depth == 2 and rng.random() < 0.5:
        out.append(("table", table(rng, lang)))
    if rng.random() < 0.2:
        out.append(("p", f"**{title(rng, lang, 1, 2)}:** " + paragraph(rng, lang, 1, 2)))
    if rng.random() < 0.6:
        out.append(("p", paragraph(rng, lang, 1, 3)))
    return out


def table(rng: random.Random, lang: Language) -> TableSpec:
    """A ruled table: a header, then rows of words, a number, and a phrase."""
    header = [title(rng, lang, 1, 2) for _ in range(3)]
    rows = [[title(rng, lang, 1, 2), _number(rng, lang), title(rng, lang, 1, 3)] for _ in range(rng.randint(3, 5))]
    return TableSpec(rows, header)  # type: ignore[arg-type]


def article(rng: random.Random, lang: Language, name: str, *, numbered: bool, sections: int) -> Doc:
    """A title, an introduction, and `sections` sections with subsections (h3, some h4)."""
    doc = Doc(name)
    doc.blocks += [("h1", title(rng, lang, 3, 6)), ("p", paragraph(rng, lang, 2, 3))]
    for s in range(1, sections + 1):
        label = f"{s}. " if numbered else ""
        doc.blocks.append(("h2", label + title(rng, lang)))
        doc.blocks += _blocks(rng, lang, 2)
        for t in range(1, rng.randint(1, 3) + 1):
            label3 = f"{s}.{t} " if numbered else ""
            doc.blocks.append(("h3", label3 + title(rng, lang)))
            doc.blocks += _blocks(rng, lang, 3)
            if rng.random() < 0.25:
                doc.blocks.append(("h4", title(rng, lang, 1, 4)))
                doc.blocks += _blocks(rng, lang, 4)
    return doc


def documents(seed: int = 24) -> list[tuple[Language, Doc]]:
    """The development documents (the same ones for a given seed): two a language."""
    rng = random.Random(seed)
    out = []
    for lang in LANGUAGES:
        for i in (1, 2):
            name = f"{lang.code}-{'numbered' if i % 2 else 'article'}-{i}"
            out.append((lang, article(rng, lang, name, numbered=bool(i % 2), sections=rng.randint(3, 4))))
    return out


_BASE = (
    "@page { size: A4; margin: 20mm 20mm; }\n"
    "body { margin: 0; }\n"
    "code, pre { font-family: 'DejaVu Sans Mono', monospace; font-size: 0.86em; }\n"
    "pre { background: #f4f4f4; padding: 0.6em; font-size: 0.8em; direction: ltr; text-align: left; }\n"
    "table { border-collapse: collapse; margin: 0.8em 0; } th, td { border: 1px solid #999; padding: 0.2em 0.5em; }\n"
)
_NASKH = "'Noto Naskh Arabic', 'Noto Serif Hebrew', serif"
_SANS = "'Noto Sans Arabic', 'Noto Sans Hebrew', sans-serif"

# Page styles (fonts of Debian's fonts-noto-core; none read from a corpus file).
STYLES = {
    # A documentation page: one column, headings a size step apart.
    "plain": _BASE + f"html {{ font-family: {_NASKH}; font-size: 11pt; line-height: 1.7; }}\n"
    "h1 { font-size: 1.9em; } h2 { font-size: 1.5em; } h3 { font-size: 1.2em; } h4 { font-size: 1.05em; }\n",
    # Two justified columns, read from the right; the title across both.
    "twocol": _BASE + f"html {{ font-family: {_NASKH}; font-size: 10pt; line-height: 1.6; text-align: justify; }}\n"
    "body { column-count: 2; column-gap: 1.8em; }\n"
    "h1 { column-span: all; font-size: 1.8em; text-align: center; } h2 { font-size: 1.35em; }\n"
    "h3 { font-size: 1.12em; } h4 { font-size: 1em; }\n"
    "pre { white-space: pre-wrap; }\n",
    # A report: a sans serif, a running header and page numbers, the last two heading levels
    # bold at the body's size.
    "report": _BASE.replace("@page { size: A4; margin: 20mm 20mm; }", "") + "@page { size: A4; margin: 24mm 22mm;"
    f" @top-left {{ content: 'SVCX'; font: 9pt {_SANS}; }}"
    f" @bottom-center {{ content: counter(page); font: 9pt {_SANS}; }} }}\n"
    f"html {{ font-family: {_SANS}; font-size: 10.5pt; line-height: 1.6; }}\n"
    "h1 { font-size: 1.6em; } h2 { font-size: 1.25em; } h3 { font-size: 1em; } h4 { font-size: 1em; font-weight: normal;"
    " text-decoration: underline; }\n",
    # Bold titles at the body's size and centred section headings.
    "bold": _BASE + f"html {{ font-family: {_NASKH}; font-size: 12pt; line-height: 1.6; text-align: justify; }}\n"
    "h1 { font-size: 1.5em; text-align: center; } h2 { font-size: 1.1em; text-align: center; }\n"
    "h3 { font-size: 1em; } h4 { font-size: 1em; font-style: italic; }\n",
    # Headings on coloured bands, in a sans serif; the text in a serif.
    "banded": _BASE + f"html {{ font-family: {_NASKH}; font-size: 10.5pt; line-height: 1.65; }}\n"
    f"h1, h2, h3, h4 {{ font-family: {_SANS}; }}\n"
    "h1 { font-size: 1.7em; background: #1f3a5f; color: #fff; padding: 0.3em 0.5em; }\n"
    "h2 { font-size: 1.3em; color: #1f3a5f; border-bottom: 2px solid #1f3a5f; }\n"
    "h3 { font-size: 1.1em; color: #8a2b0f; } h4 { font-size: 1em; color: #8a2b0f; }\n",
    # Added after the rule of session 48 was made on the first five, measured before looking:
    # three narrow columns read from the right, rules between them; the title across them.
    "threecol": _BASE + f"html {{ font-family: {_NASKH}; font-size: 9pt; line-height: 1.55; }}\n"
    "body { column-count: 3; column-gap: 1.4em; column-rule: 1px solid #bbb; }\n"
    "h1 { column-span: all; font-size: 2em; } h2 { font-size: 1.3em; } h3 { font-size: 1.1em; }\n"
    "h4 { font-size: 1em; } pre { white-space: pre-wrap; }\n",
    # Headings in Noto Kufi Arabic, the text in Noto Sans Arabic; list numbers in the page's
    # own digits (Persian or Arabic-Indic), bullets as squares.
    "kufi": _BASE + f"html {{ font-family: {_SANS}; font-size: 10pt; line-height: 1.7; }}\n"
    "h1, h2, h3, h4 { font-family: 'Noto Kufi Arabic', 'Noto Sans Hebrew', sans-serif; }\n"
    "h1 { font-size: 1.6em; } h2 { font-size: 1.3em; } h3 { font-size: 1.1em; } h4 { font-size: 1em; }\n"
    "html[lang=fa] ol { list-style-type: persian; } html[lang=ar] ol { list-style-type: arabic-indic; }\n"
    "ul { list-style-type: square; }\n",
    # A form-like page: justified text in a box with a side bar of colour, headings numbered
    # by the page's CSS counters, a table striped in grey.
    "boxed": _BASE + f"html {{ font-family: {_NASKH}; font-size: 11pt; line-height: 1.6; text-align: justify; }}\n"
    "body { border-right: 6px solid #2a6f97; padding-right: 1em; }\n"
    "h1 { font-size: 1.6em; border-bottom: 1px solid #2a6f97; } h2 { font-size: 1.25em; }\n"
    "h3 { font-size: 1.05em; } h4 { font-size: 1em; font-weight: normal; text-decoration: underline; }\n"
    "tr:nth-child(even) td { background: #eee; }\n",
}
