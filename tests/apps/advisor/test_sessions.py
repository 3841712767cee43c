"""Sessions in the store: per principal, whole, back after a restart, cleared by a new conversation."""

from __future__ import annotations

from pathlib import Path

from consulta.apps.advisor import Session, SessionBook, UserForm
from consulta.runtime import Store


def test_sessions_are_per_principal_and_survive_a_new_store(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/consulta.db"
    book = SessionBook(Store(url).engine)
    session = Session(
        user_form=UserForm(school="北京大学"), page_context={"current_page": "ranking", "visible_advisors": []}
    )
    session.said("user", "我想考北大")
    book.save("web:alice", session)
    book.save("web:alice", session)  # saved again: updated, not duplicated
    assert book.load("web:bob").user_form.school is None
    back = SessionBook(Store(url).engine).load("web:alice")
    assert back == session
    assert back.form_state().model_dump()["form_status"]["missing_required"] == ["major"]


def test_clear_forgets_and_a_stored_state_that_cannot_be_read_starts_afresh(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    book = SessionBook(store.engine)
    book.save("p", Session(user_form=UserForm(school="清华大学")))
    assert book.clear("p").user_form.school is None
    assert book.load("p").user_form.school is None
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO advisor_sessions (principal, session_id, state, updated_at) VALUES ('q', 's', '{\"user_form\": 5}', 'x')"
        )
    assert book.load("q").user_form == UserForm()


def test_history_is_bounded() -> None:
    session = Session()
    for i in range(150):
        session.said("user", str(i))
    assert len(session.conversation_history) == 100 and session.conversation_history[-1].content == "149"
