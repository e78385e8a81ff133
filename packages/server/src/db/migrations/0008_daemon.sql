CREATE TABLE "agent_machine_bindings" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"machine_ref" text NOT NULL,
	"binding_kind" text NOT NULL,
	"state" text DEFAULT 'attached' NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"cwd" text DEFAULT '' NOT NULL,
	"env_overlay" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_env_overlay" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "agent_machine_bindings_agent_ref" UNIQUE("agent_id","machine_ref"),
	CONSTRAINT "agent_machine_bindings_kind" CHECK ("agent_machine_bindings"."binding_kind" IN ('explicit', 'pool')),
	CONSTRAINT "agent_machine_bindings_state" CHECK ("agent_machine_bindings"."state" IN ('attached', 'released'))
);
--> statement-breakpoint
CREATE TABLE "daemon_runtimes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"daemon_token_id" uuid NOT NULL,
	"daemon_instance_id" uuid NOT NULL,
	"daemon_version" text NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"state_reason_code" text DEFAULT '' NOT NULL,
	"state_reason_message" text DEFAULT '' NOT NULL,
	"capacity" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"observed_platform" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"lease_expires_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	CONSTRAINT "daemon_runtimes_machine_instance" UNIQUE("machine_id","daemon_instance_id"),
	CONSTRAINT "daemon_runtimes_state" CHECK (("daemon_runtimes"."state" = 'active') = ("daemon_runtimes"."ended_at" IS NULL) AND "daemon_runtimes"."state" IN ('active', 'ended'))
);
--> statement-breakpoint
CREATE TABLE "processes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"agent_id" uuid NOT NULL,
	"tool_call_id" uuid NOT NULL,
	"machine_id" uuid NOT NULL,
	"binding_id" uuid NOT NULL,
	"io_mode" text NOT NULL,
	"command" text NOT NULL,
	"shell_selector" text NOT NULL,
	"cwd" text NOT NULL,
	"env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"secret_env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"wait_ms" integer NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"runtime_id" uuid,
	"execution_granted_at" timestamp with time zone,
	"exit_code" integer,
	"exit_signal" text,
	"reason" text DEFAULT '' NOT NULL,
	"output_bytes" bigint DEFAULT 0 NOT NULL,
	"source_started_at" timestamp with time zone,
	"source_ended_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "processes_tool_call_id_unique" UNIQUE("tool_call_id"),
	CONSTRAINT "processes_io_mode" CHECK ("processes"."io_mode" IN ('pipe', 'pty')),
	CONSTRAINT "processes_state" CHECK ("processes"."state" IN ('queued', 'starting', 'running', 'exited', 'failed', 'killed', 'unknown'))
);
--> statement-breakpoint
ALTER TABLE "agent_machine_bindings" ADD CONSTRAINT "agent_machine_bindings_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "agent_machine_bindings" ADD CONSTRAINT "agent_machine_bindings_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daemon_runtimes" ADD CONSTRAINT "daemon_runtimes_daemon_token_id_machine_daemon_tokens_id_fk" FOREIGN KEY ("daemon_token_id") REFERENCES "public"."machine_daemon_tokens"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "daemon_runtimes" ADD CONSTRAINT "daemon_runtimes_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_agent_id_agents_id_fk" FOREIGN KEY ("agent_id") REFERENCES "public"."agents"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_tool_call_id_tool_calls_id_fk" FOREIGN KEY ("tool_call_id") REFERENCES "public"."tool_calls"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_binding_id_agent_machine_bindings_id_fk" FOREIGN KEY ("binding_id") REFERENCES "public"."agent_machine_bindings"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "processes" ADD CONSTRAINT "processes_org_id_machine_id_machines_org_id_id_fk" FOREIGN KEY ("org_id","machine_id") REFERENCES "public"."machines"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "agent_machine_bindings_machine_idx" ON "agent_machine_bindings" USING btree ("machine_id");--> statement-breakpoint
CREATE UNIQUE INDEX "daemon_runtimes_one_active" ON "daemon_runtimes" USING btree ("machine_id") WHERE "daemon_runtimes"."state" = 'active';--> statement-breakpoint
CREATE INDEX "daemon_runtimes_token_idx" ON "daemon_runtimes" USING btree ("daemon_token_id");--> statement-breakpoint
CREATE INDEX "processes_machine_queued_idx" ON "processes" USING btree ("machine_id","created_at") WHERE "processes"."state" = 'queued';--> statement-breakpoint
CREATE INDEX "processes_runtime_idx" ON "processes" USING btree ("runtime_id");--> statement-breakpoint
CREATE INDEX "processes_agent_idx" ON "processes" USING btree ("agent_id");