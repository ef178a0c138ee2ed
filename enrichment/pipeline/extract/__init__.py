"""Main-content extraction strategies behind ``enrichment.pipeline.extraction.extract_html``.

Two independent extractors read the same cleaned page — trafilatura (XPath heuristics over
the tree, markdown-capable) and resiliparse's main-content pass (DOM-block scoring on the
Lexbor parser) — and ``choose.choose_candidate`` picks one per page from how much their
outputs agree. Pure code: no Django, no settings, no network.
"""
