//! The old data: rows as an older ARS (schema 0002) wrote them, as SQL to store them and as
//! the domain values the store must answer for them after the upgrade.

use chrono::{DateTime, Utc};

use ars_domain::ids::GENERAL_PURPOSE_ID;
use ars_domain::{
    Agent, AgentConfig, AgentContext, AgentId, ApiToken, Backend, Limits, Message, MessageId,
    MessageRole, ModelConfig, Role, Run, RunId, RunLineage, RunStatus, ShareConfig, Thread,
    ThreadId, ThreadLineage, TokenId, ToolCallRecord, Usage, User, UserId, Visibility,
};

const USER_ID: &str = "01958a00-0000-7000-8000-000000000001";
const TOKEN_ID: &str = "01958a00-0000-7000-8000-000000000002";
const AGENT_ID: &str = "01958a00-0000-7000-8000-000000000003";
const ROOT_ID: &str = "01958a00-0000-7000-8000-000000000004";
const CHILD_ID: &str = "01958a00-0000-7000-8000-000000000004_sub_general-purpose_1a2b3c4d";
const FINISHED_RUN_ID: &str = "01958a00-0000-7000-8000-000000000005";
const CHILD_RUN_ID: &str = "01958a00-0000-7000-8000-000000000006";
const ACTIVE_RUN_ID: &str = "01958a00-0000-7000-8000-000000000007";
/// Message ids end in the thread (`a` root, `c` child) and the seq.
const MESSAGE_ID_PREFIX: &str = "01958a00-0000-7000-8000-0000000010";

pub const PASSWORD_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA";
pub const TOKEN_HASH: &str = "hash-of-the-old-token";
const AGENT_CONFIG: &str = r#"{"context":{"model":{"provider":"scripted","name":"demo","temperature":0.5},"system_prompt":"Be brief.","tools":["ls","read_file"],"subagents":["general-purpose"],"limits":{"max_steps":7,"timeout_s":60}}}"#;
const TASK_CALL: &str = r#"[{"id":"call_1","name":"task","arguments":"{\"subagent\":\"general-purpose\",\"prompt\":\"List the folder\"}"}]"#;
const LS_CALL: &str = r#"[{"id":"call_2","name":"ls","arguments":"{\"path\":\".\"}"}]"#;

const T0: &str = "2025-03-01T09:00:00.000001+00:00";
const T1: &str = "2025-03-01T10:00:00.100000+00:00";
const T2: &str = "2025-03-01T10:00:01.200000+00:00";
const T3: &str = "2025-03-01T10:00:02.300000+00:00";
const T4: &str = "2025-03-01T10:00:03.400000+00:00";
const T5: &str = "2025-03-01T10:00:04.500000+00:00";
const T6: &str = "2025-03-01T10:05:00.654321+00:00";

/// The old data as SQL against the 0002 schema. The literals suit both databases: SQLite keeps
/// the timestamp text as written (the form sqlx writes) and `TRUE`/`FALSE` as 1/0; PostgreSQL
/// reads them into `TIMESTAMPTZ`, `BOOLEAN` and `JSONB`.
pub fn old_data_sql() -> String {
    let m = MESSAGE_ID_PREFIX;
    format!(
        "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) \
         VALUES ('{USER_ID}', 'alice', '{PASSWORD_HASH}', 'user', '{T0}', '{T0}');
         INSERT INTO api_tokens (id, user_id, name, token_hash, created_at, expires_at) \
         VALUES ('{TOKEN_ID}', '{USER_ID}', 'laptop', '{TOKEN_HASH}', '{T0}', NULL);
         INSERT INTO agents (id, slug, name, description, backend_id, is_subagent, config_json, \
             visibility, owner_id, is_default, is_builtin, created_at, updated_at) \
         VALUES ('{AGENT_ID}', 'helper-bot', 'Helper bot', 'Answers questions.', \
             'DefaultBackend', FALSE, '{AGENT_CONFIG}', 'public', '{USER_ID}', TRUE, FALSE, \
             '{T0}', '{T1}');
         INSERT INTO threads (id, user_id, agent_id, title, parent_thread_id, subagent_slug, \
             runtime_scope_id, workdir_path, created_at, updated_at) VALUES \
             ('{ROOT_ID}', '{USER_ID}', '{AGENT_ID}', 'Old conversation', NULL, NULL, \
              '{ROOT_ID}', 'threads/{ROOT_ID}', '{T1}', '{T6}'), \
             ('{CHILD_ID}', '{USER_ID}', '{GENERAL_PURPOSE_ID}', 'Look it up', '{ROOT_ID}', \
              'general-purpose', '{ROOT_ID}', 'threads/{ROOT_ID}', '{T2}', '{T4}');
         INSERT INTO runs (id, thread_id, agent_id, user_id, status, input, output, error, \
             prompt_tokens, completion_tokens, parent_run_id, parent_tool_call_id, created_at, \
             started_at, finished_at) VALUES \
             ('{FINISHED_RUN_ID}', '{ROOT_ID}', '{AGENT_ID}', '{USER_ID}', 'success', \
              'What is in the folder?', 'Two files.', NULL, 1200, 345, NULL, NULL, '{T1}', \
              '{T1}', '{T5}'), \
             ('{CHILD_RUN_ID}', '{CHILD_ID}', '{GENERAL_PURPOSE_ID}', '{USER_ID}', 'success', \
              'List the folder', 'a.txt b.txt', NULL, 400, 10, '{FINISHED_RUN_ID}', 'call_1', \
              '{T2}', '{T2}', '{T4}'), \
             ('{ACTIVE_RUN_ID}', '{ROOT_ID}', '{AGENT_ID}', '{USER_ID}', 'running', 'And now?', \
              NULL, NULL, 50, 0, NULL, NULL, '{T6}', '{T6}', NULL);
         INSERT INTO messages (id, thread_id, run_id, seq, role, content, tool_calls, \
             tool_call_id, tool_name, is_error, created_at) VALUES \
             ('{m}a1', '{ROOT_ID}', '{FINISHED_RUN_ID}', 1, 'user', 'What is in the folder?', \
              '[]', NULL, NULL, FALSE, '{T1}'), \
             ('{m}a2', '{ROOT_ID}', '{FINISHED_RUN_ID}', 2, 'assistant', '', '{TASK_CALL}', \
              NULL, NULL, FALSE, '{T2}'), \
             ('{m}a3', '{ROOT_ID}', '{FINISHED_RUN_ID}', 3, 'tool', 'a.txt b.txt', '[]', \
              'call_1', 'task', FALSE, '{T4}'), \
             ('{m}a4', '{ROOT_ID}', '{FINISHED_RUN_ID}', 4, 'assistant', 'Two files.', '[]', \
              NULL, NULL, FALSE, '{T5}'), \
             ('{m}a5', '{ROOT_ID}', '{ACTIVE_RUN_ID}', 5, 'user', 'And now?', '[]', NULL, NULL, \
              FALSE, '{T6}'), \
             ('{m}c1', '{CHILD_ID}', '{CHILD_RUN_ID}', 1, 'user', 'List the folder', '[]', NULL, \
              NULL, FALSE, '{T2}'), \
             ('{m}c2', '{CHILD_ID}', '{CHILD_RUN_ID}', 2, 'assistant', 'Looking.', '{LS_CALL}', \
              NULL, NULL, FALSE, '{T3}'), \
             ('{m}c3', '{CHILD_ID}', '{CHILD_RUN_ID}', 3, 'tool', 'ls: permission denied', \
              '[]', 'call_2', 'ls', TRUE, '{T3}'), \
             ('{m}c4', '{CHILD_ID}', '{CHILD_RUN_ID}', 4, 'assistant', 'a.txt b.txt', '[]', NULL, \
              NULL, FALSE, '{T4}');"
    )
}

/// The old rows as the store must answer them after the upgrade, written out as domain values
/// (not decoded from the SQL above), so a column read wrongly shows up as a difference.
#[derive(Clone)]
pub struct Old {
    pub user: User,
    pub token: ApiToken,
    pub agent: Agent,
    pub root: Thread,
    pub child: Thread,
    pub finished: Run,
    pub child_run: Run,
    pub active: Run,
    pub root_messages: Vec<Message>,
    pub child_messages: Vec<Message>,
}

impl Old {
    pub fn expected() -> Self {
        let user_id = UserId::parse(USER_ID).unwrap();
        let agent_id = AgentId::parse(AGENT_ID).unwrap();
        let root_id = ThreadId::parse(ROOT_ID).unwrap();
        let child_id = ThreadId::parse(CHILD_ID).unwrap();
        let finished_id = RunId::parse(FINISHED_RUN_ID).unwrap();
        let child_run_id = RunId::parse(CHILD_RUN_ID).unwrap();
        let active_id = RunId::parse(ACTIVE_RUN_ID).unwrap();

        let root = Thread {
            id: root_id.clone(),
            user_id,
            agent_id,
            title: "Old conversation".into(),
            lineage: None,
            runtime_scope_id: ROOT_ID.into(),
            workdir_path: format!("threads/{ROOT_ID}"),
            created_at: at(T1),
            updated_at: at(T6),
        };
        let child = Thread {
            id: child_id.clone(),
            agent_id: GENERAL_PURPOSE_ID,
            title: "Look it up".into(),
            lineage: Some(ThreadLineage {
                parent_thread_id: root_id.clone(),
                subagent_slug: "general-purpose".into(),
            }),
            created_at: at(T2),
            updated_at: at(T4),
            ..root.clone()
        };

        let finished = Run {
            id: finished_id,
            thread_id: root_id.clone(),
            agent_id,
            user_id,
            status: RunStatus::Success,
            input: "What is in the folder?".into(),
            output: Some("Two files.".into()),
            error: None,
            error_code: None,
            usage: Usage {
                prompt_tokens: 1200,
                completion_tokens: 345,
            },
            lineage: None,
            created_at: at(T1),
            started_at: Some(at(T1)),
            finished_at: Some(at(T5)),
            pending: Vec::new(),
        };
        let child_run = Run {
            id: child_run_id,
            thread_id: child_id.clone(),
            agent_id: GENERAL_PURPOSE_ID,
            input: "List the folder".into(),
            output: Some("a.txt b.txt".into()),
            usage: Usage {
                prompt_tokens: 400,
                completion_tokens: 10,
            },
            lineage: Some(RunLineage {
                parent_run_id: finished_id,
                parent_tool_call_id: Some("call_1".into()),
                delivery: None,
            }),
            created_at: at(T2),
            started_at: Some(at(T2)),
            finished_at: Some(at(T4)),
            ..finished.clone()
        };
        let active = Run {
            id: active_id,
            status: RunStatus::Running,
            input: "And now?".into(),
            output: None,
            usage: Usage {
                prompt_tokens: 50,
                completion_tokens: 0,
            },
            created_at: at(T6),
            started_at: Some(at(T6)),
            finished_at: None,
            ..finished.clone()
        };

        let text = |thread: &ThreadId, seq: i64, run: RunId, role, content: &str, time| Message {
            id: message_id(thread == &root_id, seq),
            thread_id: thread.clone(),
            run_id: Some(run),
            seq,
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            is_error: false,
            notice: None,
            created_at: at(time),
            replaced_by_run_id: None,
            steer: false,
        };
        let call = |id: &str, name: &str, arguments: &str| ToolCallRecord {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            interrupted: false,
        };
        let (user, assistant, tool) =
            (MessageRole::User, MessageRole::Assistant, MessageRole::Tool);
        let root_messages = vec![
            text(&root_id, 1, finished_id, user, "What is in the folder?", T1),
            Message {
                tool_calls: vec![call(
                    "call_1",
                    "task",
                    r#"{"subagent":"general-purpose","prompt":"List the folder"}"#,
                )],
                ..text(&root_id, 2, finished_id, assistant, "", T2)
            },
            Message {
                tool_call_id: Some("call_1".into()),
                tool_name: Some("task".into()),
                ..text(&root_id, 3, finished_id, tool, "a.txt b.txt", T4)
            },
            text(&root_id, 4, finished_id, assistant, "Two files.", T5),
            text(&root_id, 5, active_id, user, "And now?", T6),
        ];
        let child_messages = vec![
            text(&child_id, 1, child_run_id, user, "List the folder", T2),
            Message {
                tool_calls: vec![call("call_2", "ls", r#"{"path":"."}"#)],
                ..text(&child_id, 2, child_run_id, assistant, "Looking.", T3)
            },
            Message {
                tool_call_id: Some("call_2".into()),
                tool_name: Some("ls".into()),
                is_error: true,
                ..text(
                    &child_id,
                    3,
                    child_run_id,
                    tool,
                    "ls: permission denied",
                    T3,
                )
            },
            text(&child_id, 4, child_run_id, assistant, "a.txt b.txt", T4),
        ];

        Self {
            user: User {
                id: user_id,
                username: "alice".into(),
                role: Role::User,
                disabled: false,
                created_at: at(T0),
                updated_at: at(T0),
            },
            token: ApiToken {
                id: TokenId::parse(TOKEN_ID).unwrap(),
                user_id,
                name: "laptop".into(),
                created_at: at(T0),
                expires_at: None,
                last_used_at: None,
            },
            agent: Agent {
                id: agent_id,
                slug: "helper-bot".into(),
                name: "Helper bot".into(),
                description: "Answers questions.".into(),
                backend_id: Backend::Default,
                is_subagent: false,
                config_json: AgentConfig {
                    context: AgentContext {
                        model: Some(ModelConfig {
                            provider: "scripted".into(),
                            name: "demo".into(),
                            temperature: Some(0.5),
                            max_tokens: None,
                            top_p: None,
                            script: None,
                        }),
                        system_prompt: Some("Be brief.".into()),
                        tools: Some(vec!["ls".into(), "read_file".into()]),
                        subagents: Some(vec!["general-purpose".into()]),
                        limits: Some(Limits {
                            max_steps: Some(7),
                            timeout_s: Some(60),
                            max_tokens: None,
                            approval_timeout_s: None,
                            max_total_tokens: None,
                        }),
                        ..AgentContext::default()
                    },
                },
                share_config: ShareConfig {
                    visibility: Visibility::Public,
                    user_ids: Vec::new(),
                    manager_ids: Vec::new(),
                },
                owner_id: Some(user_id),
                is_default: true,
                is_builtin: false,
                created_at: at(T0),
                updated_at: at(T1),
            },
            root,
            child,
            finished,
            child_run,
            active,
            root_messages,
            child_messages,
        }
    }
}

/// The id of message `seq` of the root thread (`root`) or of the child thread.
fn message_id(root: bool, seq: i64) -> MessageId {
    let thread = if root { 'a' } else { 'c' };
    MessageId::parse(&format!("{MESSAGE_ID_PREFIX}{thread}{seq}")).unwrap()
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}
