CREATE TABLE "skill_grants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"skill_id" uuid NOT NULL,
	"target_project_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "skill_grants_target" UNIQUE("skill_id","target_project_id")
);
--> statement-breakpoint
CREATE TABLE "skill_revisions" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"skill_id" uuid NOT NULL,
	"revision" integer NOT NULL,
	"description" text NOT NULL,
	"skill_md" text NOT NULL,
	"files" jsonb NOT NULL,
	"archive_key" text NOT NULL,
	"archive_format" text NOT NULL,
	"archive_digest" text NOT NULL,
	"archive_size" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "skill_revisions_number" UNIQUE("skill_id","revision"),
	CONSTRAINT "skill_revisions_number_positive" CHECK ("skill_revisions"."revision" > 0),
	CONSTRAINT "skill_revisions_archive_format" CHECK ("skill_revisions"."archive_format" IN ('zip', 'tar.gz'))
);
--> statement-breakpoint
CREATE TABLE "skills" (
	"id" uuid PRIMARY KEY NOT NULL,
	"org_id" uuid NOT NULL,
	"owner_kind" text NOT NULL,
	"owner_project_id" uuid,
	"owner_user_id" uuid,
	"name" text NOT NULL,
	"current_revision_id" uuid NOT NULL,
	"current_revision" integer NOT NULL,
	"description" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	"updated_at" timestamp with time zone DEFAULT date_trunc('milliseconds', statement_timestamp()) NOT NULL,
	CONSTRAINT "skills_org_id_id" UNIQUE("org_id","id"),
	CONSTRAINT "skills_owner_name" UNIQUE NULLS NOT DISTINCT("org_id","owner_kind","owner_project_id","owner_user_id","name"),
	CONSTRAINT "skills_owner_shape" CHECK (("skills"."owner_kind" = 'org' AND "skills"."owner_project_id" IS NULL AND "skills"."owner_user_id" IS NULL)
        OR ("skills"."owner_kind" = 'project' AND "skills"."owner_project_id" IS NOT NULL AND "skills"."owner_user_id" IS NULL)
        OR ("skills"."owner_kind" = 'user' AND "skills"."owner_project_id" IS NULL AND "skills"."owner_user_id" IS NOT NULL)),
	CONSTRAINT "skills_current_revision_positive" CHECK ("skills"."current_revision" > 0)
);
--> statement-breakpoint
ALTER TABLE "skill_grants" ADD CONSTRAINT "skill_grants_org_id_skill_id_skills_org_id_id_fk" FOREIGN KEY ("org_id","skill_id") REFERENCES "public"."skills"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_grants" ADD CONSTRAINT "skill_grants_org_id_target_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","target_project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_revisions" ADD CONSTRAINT "skill_revisions_org_id_skill_id_skills_org_id_id_fk" FOREIGN KEY ("org_id","skill_id") REFERENCES "public"."skills"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_org_id_orgs_id_fk" FOREIGN KEY ("org_id") REFERENCES "public"."orgs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_org_id_owner_project_id_projects_org_id_id_fk" FOREIGN KEY ("org_id","owner_project_id") REFERENCES "public"."projects"("org_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_owner_membership_fk" FOREIGN KEY ("org_id","owner_user_id") REFERENCES "public"."org_memberships"("org_id","user_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "skill_grants_project_idx" ON "skill_grants" USING btree ("target_project_id");--> statement-breakpoint
CREATE INDEX "skills_org_created_idx" ON "skills" USING btree ("org_id","created_at","id");