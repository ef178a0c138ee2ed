"""Main-content extraction strategies behind ``enrichment.pipeline.extraction.extract_html``.

The page's declared kind (``signals.py``: schema.org types and ``og:type``; article, forum,
product or other) picks the strategy. Up to three candidates read the same cleaned page —
trafilatura (XPath heuristics over the tree, markdown-capable; replies kept on discussion
pages), resiliparse's main-content pass (DOM-block scoring on the Lexbor parser) and the
page's declared main region without its chrome (``region.py``, text or markdown) — and
``choose.choose_for_kind`` picks one per page from how much they agree; when trafilatura's
text is kept, the blocks it pruned inside it come back from resiliparse's (``union.py``).
Hidden elements are removed before any of them reads the page (``hidden.py``). Pure code: no
Django, no settings, no network.
"""
