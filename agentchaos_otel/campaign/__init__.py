"""Robustness campaigns and the report built from their traces.

``runner`` runs tasks x conditions x seeds through any agent's ``run_one``; ``sanity`` holds the
checks that must pass before a campaign counts; ``measures`` computes the study's measures from
stored episodes; ``report``, ``plots`` and ``html`` present them next to the published figures
of ``published``; ``cli`` exposes ``agentchaos campaign ...`` and ``agentchaos report ...``.
"""
