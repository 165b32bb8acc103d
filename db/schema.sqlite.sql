-- Parity's SQLite schema at revision 0020, as the migration chain leaves it: a new store is made
-- from this file (db/migrate.py). Written by `parity db schema --write`; do not edit by hand.
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);

CREATE TABLE ci_run (
	id INTEGER NOT NULL, 
	ci_system VARCHAR(32) NOT NULL, 
	repository VARCHAR(200) NOT NULL, 
	workflow VARCHAR(300) NOT NULL, 
	run_id VARCHAR(64) NOT NULL, 
	attempt INTEGER NOT NULL, 
	head_sha VARCHAR(64) NOT NULL, 
	branch VARCHAR(200) NOT NULL, 
	event VARCHAR(64) NOT NULL, 
	conclusion VARCHAR(32) NOT NULL, 
	url VARCHAR(500) NOT NULL, 
	created_at DATETIME, 
	started_at DATETIME, 
	completed_at DATETIME, untrusted VARCHAR(64) DEFAULT '' NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (ci_system, repository, run_id, attempt)
);

CREATE TABLE framework (
	id INTEGER NOT NULL, 
	name VARCHAR(32) NOT NULL, 
	version VARCHAR(100) NOT NULL, 
	image VARCHAR(300) NOT NULL, 
	rocm_version VARCHAR(32) NOT NULL, 
	cuda_version VARCHAR(32) NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (name, version, image, rocm_version, cuda_version)
);

CREATE TABLE hardware (
	id INTEGER NOT NULL, 
	vendor VARCHAR(16) NOT NULL, 
	sku VARCHAR(32) NOT NULL, 
	arch VARCHAR(32) NOT NULL, 
	gpu_count INTEGER NOT NULL, 
	raw_name VARCHAR(200) NOT NULL, 
	mapped BOOLEAN NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (vendor, sku, arch, gpu_count, raw_name)
);

CREATE TABLE ingest_error (
	id INTEGER NOT NULL, 
	path TEXT NOT NULL, 
	sha256 VARCHAR(64) NOT NULL, 
	reason TEXT NOT NULL, 
	format VARCHAR(32) NOT NULL, 
	at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (path, sha256)
);

CREATE TABLE test_case (
	id INTEGER NOT NULL, 
	test_key TEXT NOT NULL, 
	parity_id BIGINT NOT NULL, 
	parity_key TEXT NOT NULL, 
	file TEXT NOT NULL, 
	classname TEXT NOT NULL, 
	name TEXT NOT NULL, 
	params TEXT, 
	group_name TEXT NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE ci_job (
	id INTEGER NOT NULL, 
	run_pk INTEGER NOT NULL, 
	job_id VARCHAR(100) NOT NULL, 
	name VARCHAR(500) NOT NULL, 
	suite VARCHAR(200) NOT NULL, 
	runner_labels TEXT NOT NULL, 
	runner_name VARCHAR(200) NOT NULL, 
	runner_group VARCHAR(200) NOT NULL, 
	hardware_id INTEGER, 
	framework_id INTEGER, 
	conclusion VARCHAR(32) NOT NULL, 
	url VARCHAR(500) NOT NULL, 
	created_at DATETIME, 
	started_at DATETIME, 
	completed_at DATETIME, raw_pruned_at DATETIME, exit_status INTEGER, signal_reason VARCHAR(32) DEFAULT '' NOT NULL, soft_failed BOOLEAN DEFAULT 0 NOT NULL, retried_in VARCHAR(100) DEFAULT '' NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(framework_id) REFERENCES framework (id), 
	FOREIGN KEY(hardware_id) REFERENCES hardware (id), 
	FOREIGN KEY(run_pk) REFERENCES ci_run (id) ON DELETE CASCADE, 
	UNIQUE (run_pk, job_id)
);

CREATE TABLE artifact (
	id INTEGER NOT NULL, 
	job_pk INTEGER NOT NULL, 
	name VARCHAR(300) NOT NULL, 
	path TEXT NOT NULL, 
	sha256 VARCHAR(64) NOT NULL, 
	size_bytes BIGINT NOT NULL, 
	format VARCHAR(32) NOT NULL, 
	parser_version VARCHAR(16) NOT NULL, 
	records INTEGER NOT NULL, 
	ingested_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE, 
	UNIQUE (job_pk, sha256)
);

CREATE TABLE test_summary (
	job_pk INTEGER NOT NULL, 
	group_name TEXT NOT NULL, 
	total INTEGER NOT NULL, 
	passed INTEGER NOT NULL, 
	failed INTEGER NOT NULL, 
	error INTEGER NOT NULL, 
	skipped INTEGER NOT NULL, 
	xfailed INTEGER NOT NULL, 
	xpassed INTEGER NOT NULL, 
	flaky INTEGER NOT NULL, 
	vendor_skipped INTEGER NOT NULL, 
	duration_s FLOAT NOT NULL, 
	PRIMARY KEY (job_pk, group_name), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE
);

CREATE TABLE accuracy_metric (
	id INTEGER NOT NULL, 
	job_pk INTEGER NOT NULL, 
	artifact_pk INTEGER NOT NULL, 
	record_no INTEGER NOT NULL, 
	model VARCHAR(300) NOT NULL, 
	task VARCHAR(200) NOT NULL, 
	metric VARCHAR(100) NOT NULL, 
	filter VARCHAR(100) NOT NULL, 
	value FLOAT, 
	stderr FLOAT, 
	n INTEGER, 
	higher_is_better BOOLEAN NOT NULL, 
	is_group BOOLEAN NOT NULL, 
	parent_group VARCHAR(200) NOT NULL, 
	threshold FLOAT, 
	gate_passed BOOLEAN, 
	config TEXT NOT NULL, 
	config_key VARCHAR(16) NOT NULL, 
	precision VARCHAR(32) NOT NULL, 
	tp INTEGER, 
	ep INTEGER, 
	dp INTEGER, 
	concurrency INTEGER, 
	PRIMARY KEY (id), 
	FOREIGN KEY(artifact_pk) REFERENCES artifact (id) ON DELETE CASCADE, 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE, 
	UNIQUE (artifact_pk, record_no, task, metric, filter)
);

CREATE TABLE benchmark_metric (
	id INTEGER NOT NULL, 
	job_pk INTEGER NOT NULL, 
	artifact_pk INTEGER NOT NULL, 
	record_no INTEGER NOT NULL, 
	benchmark VARCHAR(200) NOT NULL, 
	model VARCHAR(300) NOT NULL, 
	metric VARCHAR(200) NOT NULL, 
	statistic VARCHAR(16) NOT NULL, 
	unit VARCHAR(16) NOT NULL, 
	direction VARCHAR(8) NOT NULL, 
	value FLOAT, 
	samples TEXT, 
	status VARCHAR(64), 
	config TEXT NOT NULL, 
	config_key VARCHAR(16) NOT NULL, 
	precision VARCHAR(32) NOT NULL, 
	tp INTEGER, 
	ep INTEGER, 
	dp INTEGER, 
	pp INTEGER, 
	isl INTEGER, 
	osl INTEGER, 
	concurrency INTEGER, 
	request_rate FLOAT, 
	batch_size INTEGER, series_pk INTEGER, 
	PRIMARY KEY (id), 
	FOREIGN KEY(artifact_pk) REFERENCES artifact (id) ON DELETE CASCADE, 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE, 
	UNIQUE (artifact_pk, record_no, metric)
);

CREATE TABLE runner_snapshot (
	id INTEGER NOT NULL, 
	scope VARCHAR(200) NOT NULL, 
	runner_id VARCHAR(64) NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	labels TEXT NOT NULL, 
	os VARCHAR(32) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	busy BOOLEAN NOT NULL, 
	hardware_id INTEGER, 
	seen_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(hardware_id) REFERENCES hardware (id), 
	UNIQUE (scope, runner_id, seen_at)
);

CREATE TABLE http_validator (
	url VARCHAR(1000) NOT NULL, 
	etag VARCHAR(200) NOT NULL, 
	next_url VARCHAR(1000) NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (url)
);

CREATE TABLE sync_checkpoint (
	scope VARCHAR(500) NOT NULL, 
	covered_from DATETIME NOT NULL, 
	tail_start DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, 
	PRIMARY KEY (scope)
);

CREATE TABLE synced_run (
	id INTEGER NOT NULL, 
	ci_system VARCHAR(32) NOT NULL, 
	repository VARCHAR(200) NOT NULL, 
	run_id VARCHAR(64) NOT NULL, 
	attempt INTEGER NOT NULL, 
	jobs INTEGER NOT NULL, 
	artifacts INTEGER NOT NULL, 
	synced_at DATETIME NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (ci_system, repository, run_id, attempt)
);

CREATE TABLE ci_artifact (
	id INTEGER NOT NULL, 
	run_pk INTEGER NOT NULL, 
	job_pk INTEGER, 
	artifact_id VARCHAR(64) NOT NULL, 
	name VARCHAR(300) NOT NULL, 
	size_bytes BIGINT NOT NULL, 
	digest VARCHAR(100) NOT NULL, 
	sha256 VARCHAR(64) NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	reason TEXT NOT NULL, 
	mapped_by VARCHAR(16) NOT NULL, 
	files INTEGER NOT NULL, 
	created_at DATETIME, 
	PRIMARY KEY (id), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE SET NULL, 
	FOREIGN KEY(run_pk) REFERENCES ci_run (id) ON DELETE CASCADE, 
	UNIQUE (run_pk, artifact_id)
);

CREATE TABLE job_capability (
	job_pk INTEGER NOT NULL, 
	name VARCHAR(64) NOT NULL, 
	source VARCHAR(16) NOT NULL, 
	PRIMARY KEY (job_pk, name), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE
);

CREATE TABLE source_sync (
	name VARCHAR(200) NOT NULL, 
	kind VARCHAR(32) NOT NULL, 
	target VARCHAR(500) DEFAULT '' NOT NULL, 
	last_attempt_at DATETIME NOT NULL, 
	last_success_at DATETIME, 
	status VARCHAR(16) NOT NULL, 
	message TEXT DEFAULT '' NOT NULL, 
	PRIMARY KEY (name)
);

CREATE TABLE alert (
	fingerprint VARCHAR(40) NOT NULL, 
	rule VARCHAR(64) NOT NULL, 
	priority VARCHAR(4) NOT NULL, 
	framework VARCHAR(32) DEFAULT '' NOT NULL, 
	hardware VARCHAR(200) DEFAULT '' NOT NULL, 
	subject TEXT NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	first_seen DATETIME NOT NULL, 
	last_seen DATETIME NOT NULL, 
	resolved_at DATETIME, 
	quiet_rounds INTEGER DEFAULT '0' NOT NULL, 
	evidence TEXT DEFAULT '{}' NOT NULL, 
	evidence_hash VARCHAR(64) DEFAULT '' NOT NULL, 
	url VARCHAR(500) DEFAULT '' NOT NULL, 
	issue_repo VARCHAR(200) DEFAULT '' NOT NULL, 
	issue_number INTEGER, 
	previous_issue INTEGER, 
	PRIMARY KEY (fingerprint)
);

CREATE TABLE job_summary (
	job_pk INTEGER NOT NULL, 
	total INTEGER NOT NULL, 
	passed INTEGER NOT NULL, 
	failed INTEGER NOT NULL, 
	error INTEGER NOT NULL, 
	skipped INTEGER NOT NULL, 
	xfailed INTEGER NOT NULL, 
	xpassed INTEGER NOT NULL, 
	flaky INTEGER NOT NULL, 
	vendor_skipped INTEGER NOT NULL, 
	duration_s FLOAT NOT NULL, 
	PRIMARY KEY (job_pk), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE
);

CREATE TABLE "test_result" (
	job_pk INTEGER NOT NULL, 
	test_pk INTEGER NOT NULL, 
	artifact_pk INTEGER NOT NULL, 
	run_day INTEGER NOT NULL, 
	outcome VARCHAR(16) NOT NULL, 
	phase VARCHAR(16), 
	duration_s FLOAT, 
	rerun_count INTEGER NOT NULL, 
	message TEXT, 
	skip_category VARCHAR(32), 
	PRIMARY KEY (job_pk, test_pk, artifact_pk, run_day), 
	FOREIGN KEY(artifact_pk) REFERENCES artifact (id) ON DELETE CASCADE, 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE, 
	FOREIGN KEY(test_pk) REFERENCES test_case (id)
)
 WITHOUT ROWID

;

CREATE TABLE benchmark_series (
	id INTEGER NOT NULL, 
	"key" VARCHAR(40) NOT NULL, 
	benchmark VARCHAR(200) NOT NULL, 
	model VARCHAR(300) NOT NULL, 
	metric VARCHAR(200) NOT NULL, 
	statistic VARCHAR(16) NOT NULL, 
	unit VARCHAR(16) NOT NULL, 
	direction VARCHAR(8) NOT NULL, 
	config_key VARCHAR(16) NOT NULL, 
	precision VARCHAR(32) NOT NULL, 
	tp INTEGER, 
	ep INTEGER, 
	dp INTEGER, 
	pp INTEGER, 
	isl INTEGER, 
	osl INTEGER, 
	concurrency INTEGER, 
	request_rate FLOAT, 
	batch_size INTEGER, 
	PRIMARY KEY (id), 
	UNIQUE ("key")
);

CREATE TABLE test_set (
	id INTEGER NOT NULL, 
	digest BLOB NOT NULL, 
	tests INTEGER NOT NULL, 
	test_ids BLOB NOT NULL, 
	PRIMARY KEY (id), 
	UNIQUE (digest)
);

CREATE TABLE "job_outcome" (
	job_pk INTEGER NOT NULL, 
	tests INTEGER NOT NULL, 
	set_pk INTEGER NOT NULL, 
	outcomes BLOB NOT NULL, 
	skips BLOB NOT NULL, 
	reruns BLOB NOT NULL, 
	PRIMARY KEY (job_pk), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE, 
	FOREIGN KEY(set_pk) REFERENCES test_set (id)
);

CREATE TABLE job_benchmark (
	job_pk INTEGER NOT NULL, 
	rows INTEGER NOT NULL, 
	ids BLOB NOT NULL, 
	series BLOB NOT NULL, 
	artifacts BLOB NOT NULL, 
	records BLOB NOT NULL, 
	"values" BLOB NOT NULL, 
	PRIMARY KEY (job_pk), 
	FOREIGN KEY(job_pk) REFERENCES ci_job (id) ON DELETE CASCADE
);

CREATE TABLE streak_cutoff (
	id INTEGER NOT NULL, 
	cutoff DATETIME NOT NULL, 
	PRIMARY KEY (id)
);

CREATE TABLE lane_streak (
	framework VARCHAR(100) NOT NULL, 
	hardware VARCHAR(200) NOT NULL, 
	suite VARCHAR(200) NOT NULL, 
	tests INTEGER NOT NULL, 
	ids BLOB NOT NULL, 
	tails BLOB NOT NULL, 
	since BLOB NOT NULL, 
	PRIMARY KEY (framework, hardware, suite)
);

CREATE INDEX ix_test_case_parity_id ON test_case (parity_id);

CREATE INDEX ix_ci_job_hw_fw ON ci_job (hardware_id, framework_id);

CREATE INDEX ix_accuracy_job ON accuracy_metric (job_pk);

CREATE INDEX ix_benchmark_series ON benchmark_metric (benchmark, model, metric, config_key);

CREATE INDEX ix_runner_snapshot_seen ON runner_snapshot (seen_at);

CREATE INDEX ix_ci_run_created ON ci_run (created_at);

CREATE INDEX ix_alert_state ON alert (state);

CREATE INDEX ix_test_result_notable ON test_result (job_pk, test_pk) WHERE outcome IN ('failed', 'error') OR rerun_count > 0;

CREATE INDEX ix_benchmark_series_dims ON benchmark_series (benchmark, model, metric, config_key);

CREATE INDEX ix_runner_snapshot_scope_seen ON runner_snapshot (scope, seen_at);

CREATE INDEX ix_benchmark_job_values ON benchmark_metric (job_pk, series_pk, artifact_pk, record_no, value);

CREATE INDEX ix_test_case_alias ON test_case (id, parity_id) WHERE parity_id <> id;

CREATE INDEX ix_job_outcome_set ON job_outcome (set_pk);
