-- A data dir's consulta.db as main at 0cf5dd2 left it (SQLite): the store, an advisor session and page context,
-- and quiz's tables (made by create_all). The upgrade-in-place tests open it with this version's code.
BEGIN TRANSACTION;
CREATE TABLE advisor_advisor_majors (
	advisor_id VARCHAR(12) NOT NULL, 
	school VARCHAR(40) NOT NULL, 
	major VARCHAR(40) NOT NULL, 
	overall FLOAT NOT NULL, 
	PRIMARY KEY (advisor_id, school, major), 
	FOREIGN KEY(advisor_id) REFERENCES advisor_advisors (id)
);
CREATE TABLE advisor_advisors (
	id VARCHAR(12) NOT NULL, 
	name VARCHAR(12) NOT NULL, 
	name_en VARCHAR(40) NOT NULL, 
	gender VARCHAR(1) NOT NULL, 
	school VARCHAR(40) NOT NULL, 
	major VARCHAR(40) NOT NULL, 
	title VARCHAR(10) NOT NULL, 
	research_directions TEXT NOT NULL, 
	personality VARCHAR(8) NOT NULL, 
	research_style VARCHAR(8) NOT NULL, 
	funding VARCHAR(8) NOT NULL, 
	papers INTEGER NOT NULL, 
	students INTEGER NOT NULL, 
	since INTEGER NOT NULL, 
	bio TEXT NOT NULL, 
	bio_en TEXT NOT NULL, 
	tags TEXT NOT NULL, 
	overall FLOAT NOT NULL, 
	academic FLOAT NOT NULL, 
	funding_score FLOAT NOT NULL, 
	relationship FLOAT NOT NULL, 
	future FLOAT NOT NULL, 
	review_count INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(school) REFERENCES advisor_schools (name), 
	FOREIGN KEY(major) REFERENCES advisor_majors (name)
);
CREATE TABLE advisor_catalog_meta (
	"key" VARCHAR(40) NOT NULL, 
	value TEXT NOT NULL, 
	PRIMARY KEY ("key")
);
CREATE TABLE advisor_majors (
	name VARCHAR(40) NOT NULL, 
	code VARCHAR(8) NOT NULL, 
	en VARCHAR(100) NOT NULL, 
	PRIMARY KEY (name)
);
CREATE TABLE advisor_page_contexts (
	principal VARCHAR(128) NOT NULL, 
	context TEXT NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (principal)
);
INSERT INTO "advisor_page_contexts" VALUES('web:alice','{"current_page": "ranking", "visible_advisors": [], "selected_advisor": null, "ranking_filters": {"school": null, "major": null, "sort_by": "overall"}, "recommended": []}','2026-11-27T15:27:21.304816+00:00');
CREATE TABLE advisor_reviews (
	id VARCHAR(16) NOT NULL, 
	advisor_id VARCHAR(12) NOT NULL, 
	date VARCHAR(10) NOT NULL, 
	academic INTEGER NOT NULL, 
	funding INTEGER NOT NULL, 
	relationship INTEGER NOT NULL, 
	future INTEGER NOT NULL, 
	overall FLOAT NOT NULL, 
	text TEXT NOT NULL, 
	text_en TEXT NOT NULL, 
	author VARCHAR(20) NOT NULL, 
	author_en VARCHAR(40) NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(advisor_id) REFERENCES advisor_advisors (id)
);
CREATE TABLE advisor_schools (
	name VARCHAR(40) NOT NULL, 
	en VARCHAR(100) NOT NULL, 
	city VARCHAR(20) NOT NULL, 
	position INTEGER NOT NULL, 
	PRIMARY KEY (name)
);
CREATE TABLE advisor_sessions (
	principal VARCHAR(200) NOT NULL, 
	session_id VARCHAR(64) NOT NULL, 
	state TEXT NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (principal)
);
INSERT INTO "advisor_sessions" VALUES('web:alice','sess_main0cf5dd2','{"session_id":"sess_main0cf5dd2","start_time":"2026-11-27T15:27:21.207+00:00","user_form":{"school":null,"major":null,"research_direction":null,"preferences":{"personality":null,"research_style":null,"funding":null}},"conversation_history":[{"role":"user","content":"我想找北京大学计算机的导师"},{"role":"assistant","content":"好的，北京大学计算机科学与技术。"}],"page_context":null,"memory":{"ranked_for":null,"recommended_for":null,"last_advisor":null,"pending":null,"lang":"zh-CN"}}','2026-11-27T15:27:21.208+00:00');
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
INSERT INTO "alembic_version" VALUES('0005');
CREATE TABLE asks (
	id VARCHAR(40) NOT NULL, 
	run_id VARCHAR(40) NOT NULL, 
	kind VARCHAR(20) NOT NULL, 
	tool_call_id VARCHAR(120), 
	payload TEXT NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	answer TEXT, 
	outcome TEXT, 
	answered_by VARCHAR(120), 
	timeout_s FLOAT, 
	trace_id VARCHAR(32) NOT NULL, 
	created_at VARCHAR(32) NOT NULL, 
	closed_at VARCHAR(32), 
	closed_seq INTEGER, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE checkpoints (
	run_id VARCHAR(40) NOT NULL, 
	step INTEGER NOT NULL, 
	count INTEGER NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (run_id), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE consultations (
	id VARCHAR(40) NOT NULL, 
	run_id VARCHAR(40), 
	tool_call_id VARCHAR(120), 
	expert_id VARCHAR(80) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	request TEXT NOT NULL, 
	expert_output TEXT, 
	binding_rules TEXT NOT NULL, 
	instruction_updates TEXT NOT NULL, 
	attempts INTEGER NOT NULL, 
	error TEXT, 
	expert_run_id VARCHAR(40), 
	started_at VARCHAR(32) NOT NULL, 
	finished_at VARCHAR(32) NOT NULL, 
	duration_ms FLOAT NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE counters (
	name VARCHAR(40) NOT NULL, 
	value INTEGER NOT NULL, 
	PRIMARY KEY (name)
);
CREATE TABLE "events" (
	id INTEGER NOT NULL, 
	run_id VARCHAR(40) NOT NULL, 
	type VARCHAR(40) NOT NULL, 
	data TEXT NOT NULL, 
	ts VARCHAR(32) NOT NULL, 
	seq INTEGER NOT NULL, 
	PRIMARY KEY (id), 
	CONSTRAINT uq_events_run_id_seq UNIQUE (run_id, seq), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE messages (
	run_id VARCHAR(40) NOT NULL, 
	idx INTEGER NOT NULL, 
	data TEXT NOT NULL, 
	PRIMARY KEY (run_id, idx), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE plans (
	id VARCHAR(40) NOT NULL, 
	run_id VARCHAR(40) NOT NULL, 
	app VARCHAR(40) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	items TEXT NOT NULL, 
	ask_id VARCHAR(40), 
	result TEXT, 
	created_at VARCHAR(32) NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE TABLE quiz_item_params (
	question_id VARCHAR(36) NOT NULL, 
	a FLOAT NOT NULL, 
	b FLOAT NOT NULL, 
	provisional INTEGER NOT NULL, 
	n_responses INTEGER NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (question_id)
);
CREATE TABLE quiz_keywords (
	id INTEGER NOT NULL, 
	difficulty INTEGER NOT NULL, 
	category VARCHAR(20) NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	keywords TEXT NOT NULL, 
	concepts TEXT NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (difficulty, category, lang)
);
CREATE TABLE quiz_profiles (
	user_id VARCHAR(36) NOT NULL, 
	self_level VARCHAR(20) NOT NULL, 
	years_experience INTEGER NOT NULL, 
	job_role VARCHAR(100) NOT NULL, 
	duty VARCHAR(500) NOT NULL, 
	interests TEXT NOT NULL, 
	previous_score FLOAT NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (user_id)
);
CREATE TABLE quiz_questions (
	id VARCHAR(36) NOT NULL, 
	item_type VARCHAR(20) NOT NULL, 
	stem TEXT NOT NULL, 
	choices TEXT, 
	correct_key TEXT, 
	correct_keywords TEXT, 
	difficulty INTEGER NOT NULL, 
	categories TEXT NOT NULL, 
	topic VARCHAR(100) NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	explanation TEXT, 
	source VARCHAR(20) NOT NULL, 
	round_id VARCHAR(200), 
	session_id VARCHAR(200), 
	round_number INTEGER, 
	validation_score FLOAT, 
	content_hash VARCHAR(64) NOT NULL, 
	created_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (content_hash)
);
CREATE TABLE quiz_responses (
	id VARCHAR(64) NOT NULL, 
	user_id VARCHAR(64) NOT NULL, 
	session_id VARCHAR(200) NOT NULL, 
	question_id VARCHAR(36) NOT NULL, 
	user_answer TEXT NOT NULL, 
	score FLOAT NOT NULL, 
	is_correct INTEGER NOT NULL, 
	created_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE quiz_templates (
	id VARCHAR(36) NOT NULL, 
	stem TEXT NOT NULL, 
	item_type VARCHAR(20) NOT NULL, 
	choices TEXT, 
	correct_answer TEXT, 
	difficulty INTEGER NOT NULL, 
	category VARCHAR(20) NOT NULL, 
	domain VARCHAR(100) NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	usage_count INTEGER NOT NULL, 
	avg_difficulty_score FLOAT NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE quiz_test_items (
	session_id VARCHAR(36) NOT NULL, 
	position INTEGER NOT NULL, 
	question_id VARCHAR(36) NOT NULL, 
	a FLOAT NOT NULL, 
	b FLOAT NOT NULL, 
	shown_at VARCHAR(32) NOT NULL, 
	answer TEXT, 
	score FLOAT, 
	is_correct INTEGER, 
	graded_by VARCHAR(10), 
	grader TEXT, 
	theta FLOAT, 
	se FLOAT, 
	answered_at VARCHAR(32), 
	PRIMARY KEY (session_id, position), 
	UNIQUE (session_id, question_id)
);
CREATE TABLE quiz_test_sessions (
	id VARCHAR(36) NOT NULL, 
	principal VARCHAR(100) NOT NULL, 
	user_id VARCHAR(36) NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	profile TEXT NOT NULL, 
	status VARCHAR(20) NOT NULL, 
	position INTEGER NOT NULL, 
	theta FLOAT NOT NULL, 
	se FLOAT NOT NULL, 
	prior_mean FLOAT NOT NULL, 
	rules TEXT NOT NULL, 
	seed INTEGER NOT NULL, 
	stop_reason VARCHAR(20), 
	created_at VARCHAR(32) NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, 
	finished_at VARCHAR(32), 
	PRIMARY KEY (id)
);
CREATE TABLE runs (
	id VARCHAR(40) NOT NULL, 
	app VARCHAR(40) NOT NULL, 
	thread_id VARCHAR(40) NOT NULL, 
	parent_run_id VARCHAR(40), 
	status VARCHAR(16) NOT NULL, 
	prompt TEXT NOT NULL, 
	model VARCHAR(200) NOT NULL, 
	lang VARCHAR(10) NOT NULL, 
	options TEXT NOT NULL, 
	trace_id VARCHAR(32) NOT NULL, 
	output TEXT, 
	error TEXT, 
	owner VARCHAR(120), 
	principal VARCHAR(120), 
	heartbeat_at FLOAT, 
	cancel_requested INTEGER NOT NULL, 
	created_at VARCHAR(32) NOT NULL, 
	updated_at VARCHAR(32) NOT NULL, agent VARCHAR(80) DEFAULT '' NOT NULL, 
	PRIMARY KEY (id)
);
CREATE TABLE sessions (
	token_sha256 VARCHAR(64) NOT NULL, 
	created_at VARCHAR(32) NOT NULL, 
	PRIMARY KEY (token_sha256)
);
CREATE TABLE tool_calls (
	id INTEGER NOT NULL, 
	run_id VARCHAR(40) NOT NULL, 
	step INTEGER NOT NULL, 
	tool_call_id VARCHAR(120) NOT NULL, 
	tool_name VARCHAR(120) NOT NULL, 
	args TEXT NOT NULL, 
	result TEXT NOT NULL, 
	ok INTEGER NOT NULL, 
	error_code VARCHAR(80), 
	started_at VARCHAR(32) NOT NULL, 
	duration_ms FLOAT NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(run_id) REFERENCES runs (id)
);
CREATE INDEX ix_runs_owner ON runs (owner);
CREATE INDEX ix_runs_status ON runs (status);
CREATE INDEX ix_runs_principal ON runs (principal);
CREATE INDEX ix_runs_thread_id ON runs (thread_id);
CREATE INDEX ix_asks_run_id ON asks (run_id);
CREATE INDEX ix_asks_closed_seq ON asks (closed_seq);
CREATE INDEX ix_consultations_run_id ON consultations (run_id);
CREATE INDEX ix_plans_run_id ON plans (run_id);
CREATE INDEX ix_tool_calls_run_id ON tool_calls (run_id);
CREATE INDEX ix_advisor_majors_ranking ON advisor_advisor_majors (school, major, overall);
CREATE INDEX ix_advisor_reviews_advisor ON advisor_reviews (advisor_id, date);
CREATE INDEX ix_quiz_responses_user_id ON quiz_responses (user_id);
CREATE INDEX ix_quiz_responses_question_id ON quiz_responses (question_id);
CREATE INDEX ix_quiz_responses_session_id ON quiz_responses (session_id);
CREATE INDEX ix_quiz_test_sessions_principal ON quiz_test_sessions (principal);
COMMIT;
