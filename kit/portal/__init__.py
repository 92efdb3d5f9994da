"""The portal: a static site of a shared repository's audited submissions (``ckit portal``).

``model`` reads an audit into what the pages show (plain, printable strings, in a fixed order);
``builder`` renders the Jinja2 templates in ``templates/`` over it and writes the site. Pages need
no JavaScript: hover text is a ``title`` attribute, long lists fold with ``<details>``, the trend
plot is inline SVG drawn by the template.
"""
