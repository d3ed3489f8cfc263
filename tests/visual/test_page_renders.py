"""The worker's kept renders (``tests/visual/page_renders.py``): what they serve is a real render of the same page."""

from __future__ import annotations

from tests.visual.page_renders import CachedRenderer, RenderStore

PAGE = "<html><body><h1>Kept</h1><p>rendered once</p></body></html>"


def test_a_page_is_rendered_once_and_each_caller_gets_its_own_copy(renderer, tmp_path):
    store = RenderStore()
    kept = CachedRenderer(renderer, store)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "other.html").write_text("another file: another folder")
    first, twin, elsewhere = kept.render_texts(
        [(PAGE, tmp_path / "a", "x"), (PAGE, tmp_path / "a", "y"), (PAGE, tmp_path / "b", "x")]
    )
    assert store.made == 2  # the same page twice in one call: one render; in another folder: its own
    assert first.ok and twin.ok and elsewhere.ok
    assert first.image is not twin.image and (first.image == twin.image).all()
    again = kept.render_html(PAGE, tmp_path / "a", "z")
    assert store.made == 2 and store.served == 1 and again.image is not first.image
    assert (again.image == first.image).all()
    assert (again.image == renderer.render_html(PAGE, tmp_path / "a", "fresh").image).all()
