"""The shared repository: where vendors submit signed reports and users read them.

``layout`` says where a submission lives and what it may hold; ``interface`` holds what an audit
says about each submission, which ``submit``, ``audit``, ``gate`` and the portal share.
"""
