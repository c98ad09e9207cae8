"""Early failure warning for LLM agents from what an outside observer can see.

``features`` turns every step prefix of an episode into numbers (tool errors, retries, runs
without state change, text-only answers, tokens, latency, and logprob entropy when present);
``model`` fits and stores the logistic predictor with its alarm threshold; ``evaluate`` measures
it the way the tool-response study did; ``live`` scores running agents inside the OTel pipeline;
``cli`` is ``agentchaos predict``.
"""
