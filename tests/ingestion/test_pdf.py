"""PDF extraction on the real files in tests/data/pdf and on hostile files made here.

No database: extraction is a pure function of the file (and of the OCR tools installed).
"""

import difflib
import random
import re
import shutil
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pypdf import PdfWriter
from pypdf.generic import NameObject, StreamObject
from pytest_django.fixtures import Settings

from ingestion.extract import Extracted, Segment
from ingestion.extract.pdf import clean_text, extract, parse_pdf_date, without_page_furniture
from secondbrain.errors import AppError

DATA = Path(__file__).resolve().parent.parent / "data" / "pdf"
LECTURE_NOTES = DATA / "academic_lecture_notes_GeoTopo_117p_de.pdf"
ARXIV_PAGE = DATA / "academic_arxiv2305.03393_page9.pdf"
TWO_COLUMNS = DATA / "multicolumn_latex_two_column_lorem.pdf"
THREE_COLUMNS = DATA / "federal-register-three-columns.pdf"  # made by make_three_column.py
STS_SENTENCE = "The STS provides automatic trim of the horizontal stabilizer during manual flight."
FBI_TABLE = DATA / "table_nics_background_checks_2015-11.pdf"
SCANNED = DATA / "scanned_image_only_ocr_test.pdf"
SCANNED_TRUTH = DATA / "scanned_image_only_ocr_test.groundtruth_ocr.md"
PERSONAL = DATA.parent / "personal" / "pdfs"

needs_ocr = pytest.mark.skipif(
    shutil.which("tesseract") is None or shutil.which("pdftoppm") is None,
    reason="OCR needs Debian's tesseract-ocr and poppler-utils",
)


def run(path: Path) -> tuple[Extracted, list[float]]:
    calls: list[float] = []
    return extract(path, calls.append), calls


def error_of(path: Path) -> AppError:
    with pytest.raises(AppError) as caught:
        extract(path, lambda done: None)
    return caught.value


def page_text(extracted: Extracted, number: int) -> str:
    return next(segment.text for segment in extracted.segments if segment.anchor == {"page": number})


def one_line(text: str) -> str:
    return " ".join(text.split())


# --- real files -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lecture_notes() -> tuple[Extracted, list[float]]:
    """The 117 pages take seconds to read: once for all the tests that look at them."""
    return run(LECTURE_NOTES)


def test_it_extracts_every_page_of_the_lecture_notes_with_its_page_number(
    lecture_notes: tuple[Extracted, list[float]],
) -> None:
    extracted, _ = lecture_notes

    assert [segment.anchor for segment in extracted.segments] == [{"page": n} for n in range(1, 118)]
    # Page 21 (printed "18") states Heine-Borel: a citation of it must open that page.
    assert "Satz 1.1 (Heine-Borel)" in page_text(extracted, 21)
    assert "genau dann kompakt, wenn sie beschränkt und abgeschlossen ist" in one_line(page_text(extracted, 21))
    assert "Heine-Borel" not in page_text(extracted, 20)
    assert extracted.metadata == {"pages": 117, "title": "Geometrie und Topologie", "author": "Martin Thoma"}
    # The PDF's /CreationDate (D:20161231184323+01'00'), not its later /ModDate.
    assert extracted.occurred_at == datetime(2016, 12, 31, 18, 43, 23, tzinfo=timezone(timedelta(hours=1)))
    assert all("\x00" not in segment.text for segment in extracted.segments)  # Postgres rejects NUL


def test_progress_moves_page_by_page_up_to_one(lecture_notes: tuple[Extracted, list[float]]) -> None:
    _, calls = lecture_notes

    assert len(calls) == 117
    assert calls == sorted(calls) and len(set(calls)) == 117
    assert calls[0] == pytest.approx(1 / 117)
    assert calls[-1] == 1.0


def test_text_reads_as_words_a_search_would_match(lecture_notes: tuple[Extracted, list[float]]) -> None:
    extracted, _ = lecture_notes
    preface = page_text(extracted, 2)

    assert "Übungsaufgaben" in preface  # printed "Übungsauf-" / "gaben" across a line end
    assert "Schwarz-Weiß" in preface and "E-Mail" in preface  # real hyphens stay
    assert "Definition 1" in page_text(extracted, 6)  # printed with the ligature "ﬁ"
    # Short words set apart by word gaps only (",", "w", "en", "n", -328, "es") are not letterspacing.
    assert "wenn es ein" in one_line(page_text(extracted, 7))
    assert "\n\n" in preface  # paragraphs stay apart for the chunker


def test_the_arxiv_table_keeps_its_rows() -> None:
    extracted, _ = run(ARXIV_PAGE)
    text = page_text(extracted, 1)

    assert "HPO performed in OTSL and HTML representation" in one_line(text)
    # Lines set with letterspacing, where kerning adds to the tracking between two letters.
    assert "We have chosen the PubTabNet data set to perform HPO" in one_line(text)
    assert "We picked the model parameter configuration" in one_line(text)
    assert "Table 1." in text and "p erform" not in text and "mo del" not in text
    assert "6 6 OTSL 0.965 0.934 0.955 0.88 2.73" in text
    assert "HTML 0.945 0.901 0.931 0.834 3.81" in text
    assert extracted.occurred_at == datetime(2024, 8, 22, 12, 54, 27, tzinfo=UTC)


def test_two_columns_are_read_column_by_column() -> None:
    extracted, _ = run(TWO_COLUMNS)
    first = one_line(page_text(extracted, 1))

    assert len(extracted.segments) == 3
    # Whole sentences that run down the left column: interleaving the columns would cut them.
    assert "Duis eget orci sit amet orci dignissim rutrum." in first
    assert "Nam dui ligula, fringilla a, euismod sodales, sollicitudin vel, wisi." in first
    assert "Austria 8.9 83,879 Vienna German" in page_text(extracted, 3)


def test_three_columns_are_read_column_by_column() -> None:
    extracted, _ = run(THREE_COLUMNS)
    second = one_line(page_text(extracted, 2))

    assert [segment.anchor for segment in extracted.segments] == [{"page": n} for n in range(1, 5)]
    # Sentences that run from the foot of one column to the head of the next (make_three_column.py
    # prints them all): reading across the columns, as pypdf's layout mode does, would cut them.
    assert (
        "The system was added to the type design so that the handling of the airplane would stay the same "
        "across its wide range of center of gravity positions." in second
    )  # column 1 into column 2
    assert (
        "The four events happened on airplanes that had between 2,100 and 3,400 flight hours since their "
        "sensors were installed, and the data Corvane gave the FAA do not show a wear rate that would justify "
        "waiting for a heavy check that may be as much as 4,000 flight hours away." in second
    )  # column 2 into column 3
    assert (
        "Corvane reproduced the behavior on its test rig by fitting a sensor with an artificially worn track, "
        "and found that the rig followed the flight data closely." in one_line(page_text(extracted, 1))
    )
    # One passage from the middle of each column of page 2, in reading order.
    middles = [
        second.find("Each sensor is a rotary potentiometer driven through a small gear from the ball screw"),
        second.find("The wiper of an affected sensor wears a shallow groove in the track"),
        second.find("Lakeshore Connection asked that the trim log be removed from the AD."),
    ]
    assert -1 < middles[0] < middles[1] < middles[2]


def test_the_federal_registers_running_heads_and_docket_stamps_are_not_text_of_the_page() -> None:
    extracted, _ = run(THREE_COLUMNS)
    text = "\n".join(segment.text for segment in extracted.segments)

    # The head's page number stands before it on even pages and after it on odd ones.
    assert "Federal Register / Vol. 85, No. 152" not in text
    assert not re.search(r"\b4790[1-4]\b", text)
    assert "VerDate" not in text and "Frm 000" not in text and "06AUR1" not in text
    # The body stays, up to the first and last lines of each page.
    assert one_line(page_text(extracted, 1)).startswith("DEPARTMENT OF TRANSPORTATION Federal Aviation")
    assert one_line(page_text(extracted, 2)).startswith("become more than one pilot can hold for long.")
    assert one_line(page_text(extracted, 3)).startswith("Request To Allow Dispatch With the STS Switched Off")
    assert page_text(extracted, 4).endswith("BILLING CODE 4910-13-P")
    assert "The NPRM published in the Federal Register on March 12, 2020" in one_line(page_text(extracted, 1))


def test_a_sentence_in_a_paragraph_that_crosses_columns_is_found_whole_on_its_page() -> None:
    extracted, _ = run(THREE_COLUMNS)
    fourth = one_line(page_text(extracted, 4))

    assert [n for n in range(1, 5) if STS_SENTENCE in one_line(page_text(extracted, n))] == [2]
    # Page 4 has the sentence's words, but never together: what a search for the phrase must tell apart.
    assert all(re.search(rf"\b{word}\b", fourth) for word in ("STS", "provides", "automatic", "trim"))


def test_the_fbi_table_keeps_states_with_their_numbers() -> None:
    extracted, _ = run(FBI_TABLE)
    text = page_text(extracted, 1)

    assert "Alabama 18,870 23,022 22,650 859 1,178" in text
    assert "NICS Firearm Background Checks" in text
    # Its dates are indirect objects, which pypdf's own date properties give up on.
    assert extracted.occurred_at == datetime(2015, 12, 12, 18, 49, 57, tzinfo=UTC)


@needs_ocr
def test_a_scanned_page_is_read_by_ocr() -> None:
    started = time.perf_counter()
    extracted, calls = run(SCANNED)
    print(f"OCR of the scanned page: {time.perf_counter() - started:.2f} s")

    truth = one_line(SCANNED_TRUTH.read_text()).lower()
    text = one_line(page_text(extracted, 1)).lower()
    words = set(re.findall(r"\w+", text))
    recall = sum(word in words for word in re.findall(r"\w+", truth)) / len(truth.split())
    # The reference is 15 words printed cleanly at 600 dpi; tesseract 5.3 reads all of them. The
    # thresholds allow one misread word (14/15 = 0.93) or about 5 wrong characters of 95, so a
    # different tesseract build passes while a broken render (blank, rotated, wrong page) fails.
    assert recall >= 0.9
    assert difflib.SequenceMatcher(None, text, truth).ratio() >= 0.95
    assert extracted.metadata["ocr_pages"] == [1]
    assert calls == [1.0]


@needs_ocr
def test_only_the_scanned_page_of_a_mixed_pdf_is_ocrd(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.pdf"
    writer = PdfWriter(clone_from=TWO_COLUMNS)
    writer.append(SCANNED)
    writer.write(mixed)

    extracted, _ = run(mixed)

    assert [segment.anchor["page"] for segment in extracted.segments] == [1, 2, 3, 4]
    assert extracted.metadata["ocr_pages"] == [4]
    assert "Docling" in page_text(extracted, 4)


def test_without_ocr_tools_a_scan_fails_with_pdf_no_text_but_text_pages_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither pdftoppm nor tesseract can be found
    mixed = tmp_path / "mixed.pdf"
    writer = PdfWriter(clone_from=TWO_COLUMNS)
    writer.append(SCANNED)
    writer.write(mixed)

    error = error_of(SCANNED)
    extracted, _ = run(mixed)

    assert error.code == "pdf_no_text" and "OCR" in error.message
    assert [segment.anchor["page"] for segment in extracted.segments] == [1, 2, 3]
    assert "ocr_pages" not in extracted.metadata


# --- hostile and broken files -----------------------------------------------------------------


def test_an_empty_file_is_empty_content(tmp_path: Path) -> None:
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"")

    assert error_of(path).code == "empty_content"


def test_a_pdf_with_no_pages_is_empty_content(tmp_path: Path) -> None:
    path = tmp_path / "no-pages.pdf"
    PdfWriter().write(path)

    assert error_of(path).code == "empty_content"


@pytest.mark.parametrize("source", [LECTURE_NOTES, TWO_COLUMNS])
def test_a_truncated_pdf_is_corrupt(tmp_path: Path, source: Path) -> None:
    path = tmp_path / "half.pdf"
    data = source.read_bytes()
    path.write_bytes(data[: len(data) // 2])

    error = error_of(path)

    assert error.code == "pdf_corrupt"
    assert "damaged or incomplete" in error.message


def test_random_bytes_are_not_a_pdf(tmp_path: Path) -> None:
    path = tmp_path / "noise.pdf"
    path.write_bytes(random.Random(7).randbytes(50_000))

    error = error_of(path)

    assert error.code == "pdf_corrupt"
    assert "not a PDF" in error.message


def test_random_bytes_behind_a_pdf_header_are_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "header-only.pdf"
    path.write_bytes(b"%PDF-1.7\n" + random.Random(8).randbytes(50_000))

    assert error_of(path).code == "pdf_corrupt"


def test_a_text_file_named_pdf_is_not_a_pdf(tmp_path: Path) -> None:
    path = tmp_path / "notes.pdf"
    path.write_text("Meeting notes\n\nThis is plain text, not a PDF.\n" * 50)

    error = error_of(path)

    assert error.code == "pdf_corrupt"
    assert "not a PDF" in error.message


def test_a_password_protected_pdf_is_pdf_encrypted(tmp_path: Path) -> None:
    path = tmp_path / "locked.pdf"
    writer = PdfWriter(clone_from=TWO_COLUMNS)
    writer.encrypt(user_password="s3cret", owner_password="owner", algorithm="AES-256")
    writer.write(path)

    error = error_of(path)

    assert error.code == "pdf_encrypted"
    assert "password" in error.message


@pytest.mark.parametrize("algorithm", ["AES-128", "RC4-128"])
def test_a_pdf_encrypted_with_an_empty_user_password_opens(tmp_path: Path, algorithm: str) -> None:
    path = tmp_path / "restricted.pdf"
    writer = PdfWriter(clone_from=TWO_COLUMNS)
    writer.encrypt(user_password="", owner_password="owner", algorithm=algorithm)
    writer.write(path)

    extracted, _ = run(path)

    assert len(extracted.segments) == 3
    assert "Duis eget orci sit amet orci dignissim rutrum." in one_line(page_text(extracted, 1))


def test_two_thousand_blank_pages_end_quickly_in_pdf_no_text(tmp_path: Path) -> None:
    path = tmp_path / "blank.pdf"
    writer = PdfWriter()
    for _ in range(2000):
        writer.add_blank_page(width=612, height=792)
    writer.write(path)
    calls: list[float] = []

    started = time.perf_counter()
    with pytest.raises(AppError) as caught:
        extract(path, calls.append)
    print(f"2,000 blank pages: {time.perf_counter() - started:.2f} s")

    assert caught.value.code == "pdf_no_text"
    assert len(calls) == 2000  # no page was OCR'd or skipped: progress still reached the end


def test_too_many_pages_are_refused_before_any_is_read(settings: Settings) -> None:
    settings.PDF_MAX_PAGES = 100
    calls: list[float] = []

    with pytest.raises(AppError) as caught:
        extract(LECTURE_NOTES, calls.append)

    assert caught.value.code == "pdf_too_many_pages"
    assert "117" in caught.value.message and "100" in caught.value.message
    assert calls == []


def test_reading_stops_when_the_time_budget_is_spent(settings: Settings) -> None:
    settings.PDF_MAX_SECONDS = -1

    assert error_of(TWO_COLUMNS).code == "pdf_too_complex"


def _with_undecodable_page(tmp_path: Path, page_index: int | None) -> Path:
    """The two-column file with the content stream of one page (or all) under an unknown filter."""
    writer = PdfWriter(clone_from=TWO_COLUMNS)
    for index, page in enumerate(writer.pages):
        if page_index is None or index == page_index:
            stream = StreamObject()
            stream.set_data(b"BT (unreadable) Tj ET")
            stream[NameObject("/Filter")] = NameObject("/NoSuchDecode")
            page[NameObject("/Contents")] = writer._add_object(stream)
    path = tmp_path / "bad-page.pdf"
    writer.write(path)
    return path


def test_an_undecodable_page_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    extracted, calls = run(_with_undecodable_page(tmp_path, page_index=1))

    assert [segment.anchor["page"] for segment in extracted.segments] == [1, 3]
    assert extracted.metadata["unreadable_pages"] == [2]
    assert calls[-1] == 1.0


def test_a_pdf_whose_every_page_is_undecodable_is_corrupt(tmp_path: Path) -> None:
    assert error_of(_with_undecodable_page(tmp_path, page_index=None)).code == "pdf_corrupt"


# --- text cleaning and dates ------------------------------------------------------------------


def test_clean_text_tidies_what_pypdf_gives() -> None:
    raw = "Deﬁni-\ntion  of\x00 a\tword broken by a hyphen and an ex-\nample of a soft hyph\u00ad\nen."

    assert clean_text(raw) == "Definition of a word broken by a hyphen and an example of a soft hyphen."


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D:20161231184323+01'00'", datetime(2016, 12, 31, 18, 43, 23, tzinfo=timezone(timedelta(hours=1)))),
        ("D:20151212184957Z00'00'", datetime(2015, 12, 12, 18, 49, 57, tzinfo=UTC)),
        ("D:20240103093826-05'30", datetime(2024, 1, 3, 9, 38, 26, tzinfo=timezone(-timedelta(hours=5, minutes=30)))),
        ("D:2016", datetime(2016, 1, 1, tzinfo=UTC)),
        ("D:20161399000000", None),  # month 13
        ("D:00000000000000Z", None),  # what some producers write for "unknown"
        ("D:29991231000000Z", None),  # in the future
        ("yesterday", None),
        ("", None),
        (None, None),
    ],
)
def test_pdf_dates_parse_or_are_ignored(raw: str | None, expected: datetime | None) -> None:
    assert parse_pdf_date(raw) == expected


def test_running_heads_footers_and_page_numbers_are_not_text_of_the_page() -> None:
    tenancy = extract(PERSONAL / "riverside-tenancy-agreement.pdf", lambda done: None)
    text = "\n".join(segment.text for segment in tenancy.segments)
    assert "Draft v3 - not for signature" not in text and "Page 2 of 4" not in text and "HL/RC12/2026" not in text
    assert "The rent is £1,150 per calendar month" in text  # the body stays, page by page
    assert [segment.anchor["page"] for segment in tenancy.segments] == [1, 2, 3, 4]
    two_columns = extract(TWO_COLUMNS, lambda done: None)
    assert not any(line.strip().isdigit() for segment in two_columns.segments for line in segment.text.split("\n"))


def test_a_line_is_furniture_only_where_most_pages_repeat_it_at_their_edge() -> None:
    def page(number: int, body: str) -> Segment:
        return Segment(f"Club news, issue 7\n{body}\nPage {number} of 4", {"page": number})

    stories = [
        "The bake sale raised a record sum.\nThanks to everyone who baked.",
        "Training moves to the track.\nBring a head torch.",
        "",
        "Kit orders close Friday.\nSizes run small this year.",
    ]
    pages = [page(n, story) for n, story in enumerate(stories, 1)]
    pages[2] = Segment("Club news, issue 7\nOur AGM minutes.\nClub news, issue 7 is out.\nPage 3 of 4", {"page": 3})
    cleaned = without_page_furniture(pages)
    assert cleaned[0].text == "The bake sale raised a record sum.\nThanks to everyone who baked."
    assert "Club news, issue 7 is out." in cleaned[2].text  # the same words inside a page are text
    # Two pages cannot tell furniture from a heading that happens to repeat.
    assert without_page_furniture(pages[:2]) == pages[:2]


def test_a_running_head_is_furniture_on_whichever_side_its_page_number_stands() -> None:
    heads = ["12 Journal of Small Things", "Journal of Small Things 13", "14 Journal of Small Things", "Vol. 3"]
    bodies = ["Snails move slowly.\nMostly at night.", "Ants carry leaves.\nIn long lines.", "Moss grows.", "Fin."]
    pages = [Segment(f"{heads[index]}\n{bodies[index]}", {"page": index + 1}) for index in range(4)]

    cleaned = without_page_furniture(pages)

    assert [page.text for page in cleaned] == [*bodies[:3], "Vol. 3\nFin."]
