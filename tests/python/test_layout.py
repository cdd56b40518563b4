import pytest

from pxq.core.errors import InputError
from pxq.core.layout import Layout, parse_bytes, parse_layout, parse_layouts, parse_tile, resolve_mode


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1x2", Layout(1, 2, 1)),
        ("2x1", Layout(2, 1, 1)),
        ("2x4x4", Layout(2, 4, 4)),
        (" 16x1 ", Layout(16, 1, 1)),
    ],
)
def test_valid_layouts(text, expected):
    lay = parse_layout(text)
    assert lay == expected
    assert lay.cores == expected.nodes * expected.ranks_per_node * expected.threads


@pytest.mark.parametrize("text", ["0x2", "2x", "axb", "1x2x0", "2x0", "x2", "1x2x3x4", "-1x2", ""])
def test_invalid_layouts_name_the_problem(text):
    with pytest.raises(InputError) as e:
        parse_layout(text)
    assert f"'{text}'" in str(e.value)


def test_layout_str_round_trips():
    for text in ("1x2", "2x1", "2x4x4"):
        assert str(parse_layout(text)) == text
    assert [str(x) for x in parse_layouts("1x2,2x1,1x1x2")] == ["1x2", "2x1", "1x1x2"]


@pytest.mark.parametrize("text,value", [("4096", 4096), ("256K", 262144), ("1M", 1 << 20), ("64KiB", 65536)])
def test_sizes(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["0", "-1", "12Q", "1.5M", "", "K"])
def test_bad_tiles(text):
    with pytest.raises(InputError):
        parse_tile(text)


def test_tile_normalises():
    assert parse_tile("262144") == "256K"
    assert parse_tile("auto") == "auto"


def test_modes_resolve_against_threads():
    assert resolve_mode("flat", 1, None) == ("flat", 1, "off")
    assert resolve_mode("hybrid", 2, None) == ("hybrid", 2, "off")
    assert resolve_mode("tiled", 1, None) == ("tiled", 1, "256K")
    assert resolve_mode(None, 2, "64K") == ("tiled", 2, "64K")
    assert resolve_mode(None, 1, None) == ("flat", 1, "off")
    for bad in (("flat", 2, None), ("hybrid", 1, None), ("hybrid", 2, "64K"), ("tiled", 1, "off"), ("fast", 1, None)):
        with pytest.raises(InputError):
            resolve_mode(*bad)
