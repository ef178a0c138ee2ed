"""Small hand-written pages, one per kind of page people link to (no copied site markup)."""

from __future__ import annotations

CHROME = """<header><a href="/">Site</a><nav><ul><li><a href="/a">Home</a></li>
<li><a href="/b">Latest</a></li><li><a href="/c">Help</a></li></ul></nav></header>"""
FOOTER = "<footer><p>© 2026 Example Ltd · Privacy · Terms · Cookie settings</p></footer>"

POSTS = [
    ("marta_k", "12 March 2026", "My sourdough starter smells like nail polish remover after "
     "three days on the counter. I feed it once a day with rye flour and tap water. Is it dead "
     "or just hungry, and should I start over with a fresh jar?"),
    ("oldbaker", "12 March 2026", "That acetone smell means the yeast is starving, not that "
     "the starter died. Feed it twice a day for a week and discard more before each feed, and "
     "the smell goes away as the culture settles."),
    ("ferment_fan", "13 March 2026", "Chlorinated tap water can slow a young starter down as "
     "well. Leave the water in an open jug overnight or use filtered water for the first "
     "couple of weeks until it doubles reliably."),
    ("marta_k", "15 March 2026", "Update for anyone searching later: two feeds a day fixed it "
     "within five days. It now doubles in six hours and smells like yoghurt instead."),
]  # fmt: skip


def _post(author: str, date: str, text: str) -> str:
    return f"""<div class="post"><div class="post-meta"><span class="author">{author}</span>
<span class="date">posted {date}</span></div><div class="post-body"><p>{text}</p></div>
<div class="post-actions"><a href="#">Reply</a></div></div>"""


FORUM = f"""<!doctype html><html><head><title>Starter smells of acetone - Bread forum</title>
</head><body>{CHROME}<main><h1>Starter smells of acetone</h1>
{"".join(_post(*post) for post in POSTS)}</main>
<aside><h3>Similar threads</h3><ul><li><a href="/t/1">Rye or wheat?</a></li>
<li><a href="/t/2">Best flour for baguettes</a></li></ul></aside>{FOOTER}</body></html>"""

DOCS = f"""<!doctype html><html><head><title>Retries - httpkit docs</title></head><body>
{CHROME}<div class="layout"><nav class="sidebar"><ul><li><a href="/install">Install</a></li>
<li><a href="/retries">Retries</a></li><li><a href="/timeouts">Timeouts</a></li></ul></nav>
<main><article><h1>Retries</h1>
<p>httpkit retries idempotent requests that fail with a connection error. The number of
attempts and the back-off between them are set on the client when it is created.</p>
<pre><code class="language-python">client = httpkit.Client(retries=3, backoff=0.5)
response = client.get("https://example.test/items")</code></pre>
<p>Requests that are not idempotent, such as POST, are never retried unless the call passes
an idempotency key, because sending them twice could create two records.</p>
<pre><code class="language-python">client.post("/orders", json=order, idempotency_key=key)</code></pre>
<h2>Back-off</h2><p>The delay doubles after every failed attempt and is capped at thirty
seconds, with a little random jitter so clients do not retry in lock step.</p>
</article></main></div>{FOOTER}</body></html>"""

PRODUCT = f"""<!doctype html><html><head><title>Alder Trail Backpack 28 L | Outfitters</title>
</head><body>{CHROME}<main><div class="product">
<div class="gallery"><img src="/p/1.jpg" alt="Backpack front"></div>
<div class="buy-box"><h1 class="product-title">Alder Trail Backpack 28 L</h1>
<p class="price">$129.00</p><form><button type="submit">Add to cart</button></form></div>
<div class="description"><h2>Description</h2>
<p>A 28 litre day pack with a ventilated back panel, a padded hip belt and a separate
sleeve for a three litre hydration bladder. The recycled nylon shell sheds light rain.</p>
<p>Two stretch side pockets hold bottles, and the lid pocket keeps a map and snacks within
reach without taking the pack off.</p></div>
<div class="specs"><h2>Specifications</h2><table><tr><th>Weight</th><td>1.1 kg</td></tr>
<tr><th>Volume</th><td>28 L</td></tr></table></div></div></main>
<section class="recommendations"><h3>You may also like</h3><ul>
<li><a href="/p/2">Alder Trail Backpack 40 L</a></li><li><a href="/p/3">Rain cover</a></li>
</ul></section>{FOOTER}</body></html>"""

ITEMS = [
    ("Lisbon in four days", "Trams, tiles and custard tarts: a walking plan for the old town "
     "and Belém that avoids the steepest hills."),
    ("Ljubljana on a budget", "Free walking tours, a cheap castle funicular and the best "
     "market stalls for lunch in Slovenia's small capital."),
    ("Kraków beyond the square", "Kazimierz cafés, the salt mine by bus and a quiet evening "
     "walk along the Vistula river bank."),
    ("Porto by the river", "Port cellars in Gaia, the Ribeira at dusk and a day trip up the "
     "Douro valley on the slow train."),
    ("Tallinn in winter", "The medieval walls under snow, sauna culture and warming soups in "
     "the old town's cellar restaurants."),
]  # fmt: skip

LISTING = f"""<!doctype html><html><head><title>City guides - Slow Travel</title></head>
<body>{CHROME}<main><h1>City guides</h1><ul class="cards">
{"".join(f'<li class="card"><h2><a href="/g/{i}">{t}</a></h2><p>{d}</p><a href="/g/{i}">Read more</a></li>' for i, (t, d) in enumerate(ITEMS))}
</ul><nav class="pagination"><a href="?page=2">Next page</a></nav></main>{FOOTER}</body></html>"""  # noqa: E501
