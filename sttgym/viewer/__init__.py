"""The trajectory viewer: a run directory written by ``sttgym eval`` as one self-contained web page.

:func:`build_page` returns the page (the run's episodes embedded as JSON, vanilla JS and CSS, nothing
fetched from elsewhere), :func:`write_page` saves it, and :func:`make_server` serves it on localhost.
``sttgym view RUN`` is the command line. See docs/viewer.md.
"""

from sttgym.viewer.page import NotARun, build_page, load_run, write_page
from sttgym.viewer.serve import make_server

__all__ = ["NotARun", "build_page", "load_run", "write_page", "make_server"]
