"""HTML rendering of a shop `Page` (the web site's pages and the text env's `html` observation mode) and the
original's page URLs (the `url` observation mode).

The original's text env offers the rendered page HTML as an observation mode next to `text` and `text_rich`; here
both front ends render the one `Page` model, so the env's HTML is the page the web site serves (no external assets;
the radio buttons navigate through inline script, as the original's jQuery did). Every string is escaped.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from .shop import Page, ShopSession

STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:1em auto}.btn{display:inline-block;margin:.2em;"
    "padding:.2em .6em;border:1px solid #888;border-radius:4px;text-decoration:none}.product-link{font-weight:bold}"
)


def escape(text: str) -> str:
    return html.escape(text, quote=True)


def click_url(sid: str, key: str) -> str:
    return f"/s/{quote(sid)}/click?target={quote(key, safe='')}"


def render_html(page: Page, sid: str, message: str = "", reward: float | None = None) -> str:
    """The same `Page` the text env renders, as HTML (no external assets; the radio navigation is inline)."""
    out = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>WebShop</title><style>{STYLE}</style></head><body>"
    ]
    if message:
        out.append(f"<div id='message' role='alert'>{escape(message)}</div>")
    group = ""
    for e in page.elements:
        if e.kind == "title":
            out.append(f"<h2>{escape(e.label)}</h2>")
        elif e.kind == "search_box":
            out.append(
                f"<form method='post' action='/s/{escape(quote(sid))}/search'>"
                "<input id='search_input' name='search_query' type='text' autofocus>"
                "<button type='submit' class='btn' id='search_button'>Search</button></form>"
            )
        elif e.kind == "button":
            out.append(f"<a class='btn' href='{escape(click_url(sid, e.key))}'>{escape(e.label)}</a>")
        elif e.kind == "product_link":
            out.append(
                f"<div class='result'><a class='product-link' href='{escape(click_url(sid, e.key))}'>"
                f"{escape(e.label)}</a></div>"
            )
        elif e.kind == "option_group":
            group = e.label
            out.append(f"<h5 class='option-name'>{escape(e.label)}</h5>")
        elif e.kind == "option":
            checked = " checked" if e.selected else ""
            out.append(
                f"<label class='option'><input type='radio' name='{escape(group)}' value='{escape(e.label)}'"
                f" data-url='{escape(click_url(sid, e.key))}' onchange='location.href=this.dataset.url'"
                f"{checked}> {escape(e.label)}</label>"
            )
        elif e.kind == "price":
            out.append(f"<p class='price'>{escape(e.label)}</p>")
        else:
            out.append(f"<p>{escape(e.label)}</p>")
    if reward is not None:
        out.append(f"<div id='reward'><pre data-reward='{reward!r}'>{reward:.4f}</pre></div>")
    out.append("</body></html>")
    return "".join(out)


SITE = "http://127.0.0.1:3000"  # the original's Flask address, which its `url` mode reports


def page_url(session: ShopSession, sid: str) -> str:
    """The original's URL for the session's page (its `url` observation mode, routes of ENVS-NEXT §1.3): keywords
    as the Python list of the lower-cased query's words, options as the Python dict literal, both URL-quoted."""
    keywords = quote(str(session.keywords.split(" ")), safe="")
    options = quote(str(session.options), safe="")
    sid = quote(sid, safe="")
    if session.kind == "search":
        return f"{SITE}/{sid}"
    if session.kind == "results":
        return f"{SITE}/search_results/{sid}/{keywords}/{session.page_num}"
    if session.kind == "item":
        return f"{SITE}/item_page/{sid}/{session.asin}/{keywords}/{session.page_num}/{options}"
    if session.kind == "sub_page":
        sub = session.sub_page.capitalize()
        return f"{SITE}/item_sub_page/{sid}/{session.asin}/{keywords}/{session.page_num}/{sub}/{options}"
    assert session.purchase is not None
    return f"{SITE}/done/{sid}/{session.purchase.asin}/{quote(str(session.purchase.options), safe='')}"
