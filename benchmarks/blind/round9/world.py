"""The front office's world: one SQLite database per episode, seeded, graded by its final state.

A task is a list of items (one patient each); an item is a workflow of tool calls (look the patient
up, read coverage, check eligibility, book, charge, message...). Grading reads the database after
the run, so a task passes only when every item's effect is there exactly once and nothing was done
to a patient the task did not name.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass, field
from typing import Any

FAMILIES = ["Nguyen", "Okafor", "Lindqvist", "Haddad", "Moreau", "Kowalski", "Tanaka", "Silva",
            "Brennan", "Achterberg", "Petrov", "Delgado", "Mbeki", "Fischer", "Rossi", "Iyer"]
GIVENS = ["Amara", "Jonas", "Lucia", "Tomasz", "Yuki", "Rafael", "Ingrid", "Samir", "Chloe",
          "Dmitri", "Nadia", "Owen", "Priya", "Mateo", "Hana", "Felix"]
PAYERS = [("60054", "Aetna"), ("87726", "UnitedHealthcare"), ("62308", "Cigna"),
          ("SB580", "BCBS Texas"), ("39026", "Humana")]
SPECIALTIES = ["cardiology", "dermatology", "orthopedics", "endocrinology", "neurology"]
PROCEDURES = [("73721", "M25.561"), ("70553", "G43.909"), ("93306", "I48.91"), ("29881", "S83.241A")]
DATES = ["2026-12-14", "2026-12-15", "2026-12-16"]
HOURS = ["08:30", "09:15", "10:00", "11:30", "13:45", "15:00"]
KINDS = {
    "schedule": ["search_patients", "get_patient", "check_eligibility", "find_slots",
                 "book_appointment", "send_patient_message"],
    "copay": ["search_patients", "get_patient", "check_eligibility", "charge_copay"],
    "prior_auth": ["search_patients", "get_patient", "check_eligibility", "submit_prior_auth",
                   "send_patient_message"],
    "referral": ["search_patients", "create_referral", "send_patient_message"],
    "reschedule": ["search_patients", "list_appointments", "cancel_appointment", "find_slots",
                   "book_appointment", "send_patient_message"],
}


@dataclass
class Item:
    """One patient's piece of a task, with what a correct run must leave behind."""

    kind: str
    patient_id: str
    family: str
    given: str
    birth_date: str
    practitioner_id: str = ""
    date: str = ""
    hour: str = ""
    specialty: str = ""
    cpt: str = ""
    icd10: str = ""
    old_appointment: str = ""
    expect: dict[str, Any] = field(default_factory=dict)

    @property
    def ops(self) -> list[str]:
        return KINDS[self.kind]


def build_world(rng: random.Random, kinds: list[str]) -> tuple[sqlite3.Connection, list[Item]]:
    """A fresh database with 40 patients, 6 practitioners, their slots, and one item per kind."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript("""
      create table patient(id text primary key, family text, given text, birth_date text,
                           payer_id text, member_id text, phone text, active int, copay_cents int);
      create table practitioner(id text primary key, name text);
      create table slot(id text primary key, practitioner_id text, start text, status text);
      create table appointment(id text primary key, patient_id text, slot_id text, status text,
                               created int);
      create table payment(id text primary key, patient_id text, amount_cents int);
      create table message(id text primary key, patient_id text, body text);
      create table prior_auth(id text primary key, patient_id text, cpt text, icd10 text);
      create table referral(id text primary key, patient_id text, specialty text);
    """)
    used: set[tuple[str, str]] = set()
    patients = []
    for _ in range(40):
        while True:
            fam, giv = rng.choice(FAMILIES), rng.choice(GIVENS)
            if (fam, giv) not in used:
                break
        used.add((fam, giv))
        pid = str(rng.randrange(1000000, 9999999))
        dob = f"19{rng.randrange(40, 99)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 28):02d}"
        payer = rng.choice(PAYERS)[0]
        row = (pid, fam, giv, dob, payer, f"W{rng.randrange(10**8, 10**9)}",
               "" if rng.random() < 0.15 else f"+1-555-{rng.randrange(1000, 9999)}", 1,
               rng.choice([1500, 2000, 2500, 3000, 4000, 5000]))
        patients.append(row)
    db.executemany("insert into patient values (?,?,?,?,?,?,?,?,?)", patients)
    pracs = [f"prac-{rng.randrange(100, 999)}{c}" for c in "abcdef"]
    db.executemany("insert into practitioner values (?,?)", [(p, f"Dr. {rng.choice(FAMILIES)}") for p in pracs])
    for p in pracs:
        for d in DATES:
            for h in HOURS:
                db.execute("insert into slot values (?,?,?,?)",
                           (f"slot-{p[5:]}-{d[8:]}{h.replace(':', '')}", p, f"{d}T{h}:00-06:00", "free"))
    items: list[Item] = []
    chosen = rng.sample(patients, len(kinds))
    free_pracs = list(pracs)
    rng.shuffle(free_pracs)
    for n, (kind, p) in enumerate(zip(kinds, chosen, strict=True)):
        it = Item(kind, p[0], p[1], p[2], p[3])
        if kind in ("schedule", "reschedule"):
            it.practitioner_id = free_pracs[n % len(free_pracs)]
            it.date, it.hour = rng.choice(DATES), rng.choice(HOURS[:-1])
        if kind == "reschedule":
            old = f"slot-{it.practitioner_id[5:]}-{DATES[0][8:]}{HOURS[-1].replace(':', '')}"
            it.old_appointment = f"appt-{rng.randrange(10000, 99999)}"
            db.execute("update slot set status='busy' where id=?", (old,))
            db.execute("insert into appointment values (?,?,?,?,0)", (it.old_appointment, p[0], old, "booked"))
            if it.date == DATES[0] and it.hour == HOURS[-1]:
                it.hour = HOURS[0]
        if kind == "referral":
            it.specialty = rng.choice(SPECIALTIES)
        if kind == "prior_auth":
            it.cpt, it.icd10 = rng.choice(PROCEDURES)
        items.append(it)
    db.commit()
    return db, items


def slot_id(item: Item) -> str:
    return f"slot-{item.practitioner_id[5:]}-{item.date[8:]}{item.hour.replace(':', '')}"


def task_text(items: list[Item]) -> str:
    """The front-desk request as a user would type it."""
    parts = []
    for it in items:
        who = f"{it.given} {it.family} (DOB {it.birth_date})"
        if it.kind == "schedule":
            parts.append(f"book {who} with practitioner {it.practitioner_id} on {it.date} at {it.hour} "
                         "after checking eligibility, then message the patient the time and copay")
        elif it.kind == "copay":
            parts.append(f"collect today's copay for {who} (check eligibility for the amount)")
        elif it.kind == "prior_auth":
            parts.append(f"submit a prior authorization for {who}: CPT {it.cpt}, ICD-10 {it.icd10}, "
                         "then tell the patient the reference number")
        elif it.kind == "referral":
            parts.append(f"refer {who} to {it.specialty} and message the patient")
        else:
            parts.append(f"move {who}'s existing visit to {it.date} at {it.hour} with {it.practitioner_id} "
                         "and message the patient")
    return "Front desk, please: " + "; ".join(parts) + "."


def grade(db: sqlite3.Connection, items: list[Item]) -> list[str]:
    """What is wrong with the final state (empty when every item is done exactly once)."""
    problems = []
    names = {it.patient_id for it in items}
    for table in ("payment", "message", "prior_auth", "referral"):
        for (pid,) in db.execute(f"select patient_id from {table}"):  # noqa: S608 - fixed table names
            if pid not in names:
                problems.append(f"{table} for a patient not in the task: {pid}")
    for (pid,) in db.execute("select patient_id from appointment where created=1"):
        if pid not in names:
            problems.append(f"appointment for a patient not in the task: {pid}")
    for it in items:
        pid = it.patient_id
        msgs = [b for (b,) in db.execute("select body from message where patient_id=?", (pid,))]
        if it.kind in ("schedule", "reschedule"):
            rows = db.execute("select slot_id from appointment where patient_id=? and created=1 and "
                              "status='booked'", (pid,)).fetchall()
            if rows != [(slot_id(it),)]:
                problems.append(f"{pid}: booked {rows}, expected {slot_id(it)}")
            if len(msgs) != 1 or it.hour not in msgs[0]:
                problems.append(f"{pid}: messages {msgs}")
        if it.kind == "reschedule":
            st = db.execute("select status from appointment where id=?", (it.old_appointment,)).fetchone()
            if st != ("cancelled",):
                problems.append(f"{pid}: old visit {st}")
        if it.kind == "copay":
            want = db.execute("select copay_cents from patient where id=?", (pid,)).fetchone()[0]
            rows = db.execute("select amount_cents from payment where patient_id=?", (pid,)).fetchall()
            if rows != [(want,)]:
                problems.append(f"{pid}: payments {rows}, expected {want}")
        if it.kind == "prior_auth":
            rows = db.execute("select cpt, icd10 from prior_auth where patient_id=?", (pid,)).fetchall()
            if rows != [(it.cpt, it.icd10)] or len(msgs) != 1:
                problems.append(f"{pid}: prior auth {rows}, messages {len(msgs)}")
        if it.kind == "referral":
            rows = db.execute("select specialty from referral where patient_id=?", (pid,)).fetchall()
            if rows != [(it.specialty,)] or len(msgs) != 1:
                problems.append(f"{pid}: referral {rows}, messages {len(msgs)}")
    return problems
