from datetime import date

from offline_web.pages import parse_page


def test_text_headings_title_and_description() -> None:
    page = parse_page("<html><head><title> A  title </title><meta name='description' content='Desc.'>"
                      "<style>p{}</style><script>var x;</script></head><body><h1>Top</h1><h3>Sub</h3>"
                      "<p>First para<p>Second para</body></html>")
    assert page.title == "A title" and page.description == "Desc."
    assert page.heads == ["Top", "Sub"]
    assert page.paragraphs == ["First para", "Second para"]  # an unclosed <p> ends at the next one
    assert "var x" not in page.body and "p{}" not in page.body and "Second para" in page.body


def test_missing_head_end_does_not_hide_the_body() -> None:
    page = parse_page("<html><head><title>T</title><body><p>Visible text</p></body></html>")
    assert "Visible text" in page.body


def test_published_dates() -> None:
    assert parse_page("<title>SQLite Release 3.40.0 On 2022-11-16</title>").published == date(2022, 11, 16)
    assert parse_page("<body><p>Release date: 2022-10-13</p></body>").published == date(2022, 10, 13)
    assert parse_page("<body><p>Release date: March 4, 2024</p></body>").published == date(2024, 3, 4)
    assert parse_page("<meta name='date' content='2021-05-01T10:00:00Z'>").published == date(2021, 5, 1)
    assert parse_page("<title>No date</title>").published is None


def test_images_with_sizes() -> None:
    [img] = parse_page('<img src="a.png" alt=" Diagram " width="640" height="x">').images
    assert (img.src, img.alt, img.width, img.height) == ("a.png", "Diagram", 640, None)


def test_malformed_html_does_not_raise() -> None:
    assert parse_page("<html><body><p>ok</p><![CDATA[x<div></b></i>").body.startswith("ok")
