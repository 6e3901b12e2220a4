"""The plugin author kit: ``conformance init`` writes a plugin package to start from
(``plugin``, with its Jinja templates in ``templates/``), and ``guide`` generates the
sections of ``docs/plugin-guide.md`` that come from the suites."""
