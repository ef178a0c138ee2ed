"""Pure enrichment core: no Django, Channels, asgiref or ninja imports."""
