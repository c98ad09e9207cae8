"""The front office's LangChain tools, run by LangGraph's ``ToolNode``, with this corpus's faults.

Each episode gets its own tools over its own world. A fault is chosen by the episode's plan for
(item, tool, attempt); it either replaces what the tool returns (an error body, a changed or cut
result) or raises an exception of a real client library's type. Tools marked ``handled`` follow
LangChain's ``ToolException`` pattern (``handle_tool_error=True``), so the model reads the error
text; the others let the exception reach ``ToolNode``, whose default handling re-raises it and
ends the run.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tools import BaseTool, ToolException, tool

from benchmarks.blind.round9.forms import Form
from benchmarks.blind.round9.world import Item

HANDLED = {"check_eligibility", "charge_copay", "send_patient_message", "submit_prior_auth"}
IDEMPOTENT = {"search_patients", "get_patient", "check_eligibility", "find_slots", "list_appointments"}


@dataclass
class Run:
    """One episode's shared state: world, plan, step numbering and what happened."""

    db: Any
    items: list[Item]
    tool_faults: dict[tuple[int, str, int], Form]
    lock: threading.Lock = field(default_factory=threading.Lock)
    step: int = 0
    last_tool_step: int = -1
    attempts: Counter[tuple[int, str]] = field(default_factory=Counter)
    fired: list[tuple[str, int, Form]] = field(default_factory=list)
    tool_steps: list[tuple[int, str]] = field(default_factory=list)
    llm_steps: list[int] = field(default_factory=list)

    def next_step(self) -> int:
        with self.lock:
            self.step += 1
            return self.step - 1

    def items_match(self, entry: dict[str, Any]) -> bool:
        """Whether a Bundle entry is one a task item needs (its patient, slot or visit)."""
        from benchmarks.blind.round9.world import slot_id

        rid = entry.get("resource", {}).get("id")
        wanted = {it.patient_id for it in self.items} | {it.old_appointment for it in self.items}
        wanted |= {slot_id(it) for it in self.items if it.practitioner_id}
        return rid in wanted

    def item_of(self, **args: Any) -> int | None:
        for n, it in enumerate(self.items):
            if args.get("patient_id") == it.patient_id or args.get("appointment_id") == it.old_appointment != "":
                return n
            if args.get("family") == it.family and args.get("given") == it.given:
                return n
            if args.get("practitioner_id") and args.get("practitioner_id") == it.practitioner_id:
                return n
        return None


class StepCounter(BaseCallbackHandler):
    """Numbers the framework's LLM and tool runs as they start, as the tracer that writes their spans sees them."""

    run_inline = True

    def __init__(self, run: Run) -> None:
        self.run = run

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, **kwargs: Any) -> None:
        step = self.run.next_step()
        self.run.last_tool_step = step
        self.run.tool_steps.append((step, str((serialized or {}).get("name") or kwargs.get("name") or "")))


def _dump(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def make_tools(run: Run) -> list[BaseTool]:
    db = run.db

    def guarded(op: str, args: dict[str, Any], act: Any) -> str:
        n = run.item_of(**args)
        form = None
        if n is not None:
            with run.lock:
                run.attempts[(n, op)] += 1
                attempt = run.attempts[(n, op)]
            form = run.tool_faults.get((n, op, attempt))
        if form is None:
            return _dump(act())
        run.fired.append(("tool", run.last_tool_step, form))
        result = act() if form.acted or form.data else None
        try:
            return form.render_tool(op, result, run)
        except ToolException:
            raise
        except Exception as exc:
            if op in HANDLED:  # the user's pattern: show the client library's error to the model
                raise ToolException(f"{type(exc).__name__}: {exc}") from exc
            raise

    def patient_row(pid: str) -> Any:
        return db.execute("select * from patient where id=?", (pid,)).fetchone()

    @tool
    def search_patients(family: str, given: str, birth_date: str = "") -> str:
        """Search the FHIR server for Patient resources by family name (returns a searchset Bundle)."""
        def act() -> Any:
            rows = db.execute("select id, family, given, birth_date from patient where family=? order by id",
                              (family,)).fetchall()
            return {"resourceType": "Bundle", "type": "searchset", "total": len(rows),
                    "entry": [{"fullUrl": f"Patient/{r[0]}", "resource": {
                        "resourceType": "Patient", "id": r[0], "name": [{"family": r[1], "given": [r[2]]}],
                        "birthDate": r[3]}} for r in rows]}
        return guarded("search_patients", {"family": family, "given": given}, act)

    @tool
    async def get_patient(patient_id: str) -> str:
        """Read one Patient with its active Coverage (payer id, member id, phone)."""
        def act() -> Any:
            r = patient_row(patient_id)
            if r is None:
                return {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "not-found",
                        "diagnostics": f"Resource Patient/{patient_id} is not known"}]}
            res = {"resourceType": "Patient", "id": r[0], "name": [{"family": r[1], "given": [r[2]]}],
                   "birthDate": r[3], "coverage": {"payer_id": r[4], "member_id": r[5]}}
            if r[6]:
                res["telecom"] = [{"system": "phone", "value": r[6]}]
            return res
        return guarded("get_patient", {"patient_id": patient_id}, act)

    @tool
    async def check_eligibility(patient_id: str, payer_id: str, member_id: str) -> str:
        """Real-time eligibility (X12 270/271) for the patient's coverage: status and office-visit copay."""
        def act() -> Any:
            r = patient_row(patient_id)
            if r is None or r[4] != payer_id or r[5] != member_id:
                return {"status": "inactive", "errors": [{"code": "75", "description": "Subscriber/Insured Not Found"}]}
            return {"status": "active", "payer_id": payer_id, "plan": "PPO",
                    "copay": {"amount": r[8] / 100, "currency": "USD"}}
        return guarded("check_eligibility", {"patient_id": patient_id}, act)


    @tool
    def find_slots(practitioner_id: str, date: str) -> str:
        """Free Slot resources of a practitioner on a date (YYYY-MM-DD)."""
        def act() -> Any:
            rows = db.execute("select id, start from slot where practitioner_id=? and start like ? and status='free' "
                              "order by start", (practitioner_id, f"{date}%")).fetchall()
            return {"resourceType": "Bundle", "type": "searchset", "total": len(rows),
                    "entry": [{"resource": {"resourceType": "Slot", "id": i, "start": s, "status": "free"}}
                              for i, s in rows]}
        return guarded("find_slots", {"practitioner_id": practitioner_id}, act)

    @tool
    async def book_appointment(patient_id: str, slot_id: str) -> str:
        """Book a Slot for a patient (creates an Appointment; not idempotent)."""
        def act() -> Any:
            s = db.execute("select start, status from slot where id=?", (slot_id,)).fetchone()
            if s is None:
                return {"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "not-found",
                        "diagnostics": f"Slot/{slot_id} not found"}]}
            with run.lock:
                n = db.execute("select count(*) from appointment").fetchone()[0]
                aid = f"appt-{70000 + n}"
                db.execute("insert into appointment values (?,?,?,?,1)", (aid, patient_id, slot_id, "booked"))
                db.execute("update slot set status='busy' where id=?", (slot_id,))
            return {"resourceType": "Appointment", "id": aid, "status": "booked", "start": s[0]}
        return guarded("book_appointment", {"patient_id": patient_id}, act)

    @tool
    def charge_copay(patient_id: str, amount_cents: int) -> str:
        """Charge the card on file for a copay, amount in cents (not idempotent)."""
        def act() -> Any:
            with run.lock:
                n = db.execute("select count(*) from payment").fetchone()[0]
                pay_id = f"pay_{n + 1:04d}R9"
                db.execute("insert into payment values (?,?,?)", (pay_id, patient_id, amount_cents))
            return {"payment": {"id": pay_id, "status": "COMPLETED",
                                "amount_money": {"amount": amount_cents, "currency": "USD"}}}
        return guarded("charge_copay", {"patient_id": patient_id}, act)


    @tool
    async def send_patient_message(patient_id: str, body: str) -> str:
        """Send a secure portal message to the patient (not idempotent)."""
        def act() -> Any:
            with run.lock:
                n = db.execute("select count(*) from message").fetchone()[0]
                db.execute("insert into message values (?,?,?)", (f"msg-{n + 1}", patient_id, body))
            return {"id": f"msg-{n + 1}", "status": "queued"}
        return guarded("send_patient_message", {"patient_id": patient_id}, act)


    @tool
    def submit_prior_auth(patient_id: str, cpt_code: str, icd10_code: str) -> str:
        """Submit a prior authorization request (CPT + ICD-10) to the patient's payer."""
        def act() -> Any:
            with run.lock:
                n = db.execute("select count(*) from prior_auth").fetchone()[0]
                db.execute("insert into prior_auth values (?,?,?,?)",
                           (f"PA{880100 + n}", patient_id, cpt_code, icd10_code))
            return {"auth_id": f"PA{880100 + n}", "status": "pended"}
        return guarded("submit_prior_auth", {"patient_id": patient_id}, act)


    @tool
    def create_referral(patient_id: str, specialty: str, reason: str = "") -> str:
        """Create an outgoing referral (ServiceRequest) to a specialty."""
        def act() -> Any:
            with run.lock:
                n = db.execute("select count(*) from referral").fetchone()[0]
                db.execute("insert into referral values (?,?,?)", (f"sr-{n + 1}", patient_id, specialty))
            return {"resourceType": "ServiceRequest", "id": f"sr-{n + 1}", "status": "active"}
        return guarded("create_referral", {"patient_id": patient_id}, act)

    @tool
    async def list_appointments(patient_id: str) -> str:
        """The patient's Appointment resources."""
        def act() -> Any:
            rows = db.execute("select a.id, a.status, s.start from appointment a join slot s on s.id=a.slot_id "
                              "where a.patient_id=? order by a.id", (patient_id,)).fetchall()
            return {"resourceType": "Bundle", "total": len(rows), "entry": [
                {"resource": {"resourceType": "Appointment", "id": i, "status": st, "start": s}} for i, st, s in rows]}
        return guarded("list_appointments", {"patient_id": patient_id}, act)

    @tool
    def cancel_appointment(appointment_id: str) -> str:
        """Cancel an Appointment (frees its slot)."""
        def act() -> Any:
            with run.lock:
                db.execute("update appointment set status='cancelled' where id=?", (appointment_id,))
            return {"resourceType": "Appointment", "id": appointment_id, "status": "cancelled"}
        return guarded("cancel_appointment", {"appointment_id": appointment_id}, act)

    tools = [search_patients, get_patient, check_eligibility, find_slots, book_appointment, charge_copay,
             send_patient_message, submit_prior_auth, create_referral, list_appointments, cancel_appointment]
    for t in tools:
        if t.name in HANDLED:
            t.handle_tool_error = True
    return tools
