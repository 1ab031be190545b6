//! [`CancelSafe`]: a `Store` whose writes run to completion even when the caller stops waiting.
//!
//! Runs are cancelled by dropping their futures, and HTTP handlers are dropped when a client
//! goes away. A write dropped halfway can leave its transaction open on a pooled connection
//! until that connection is next used, holding SQLite's write lock meanwhile. So every write
//! here is spawned as its own task: the caller may stop waiting, the write still commits (or
//! rolls back) at once. Reads are forwarded as they are.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use ars_domain::{
    AccountChange, Agent, AgentDraft, AgentId, ApiToken, KbChunk, KbDocument, KbDocumentId,
    KnowledgeBase, KnowledgeBaseFields, KnowledgeBaseId, McpServer, McpServerFields, McpServerId,
    Message, MessageId, ModelProvider, ModelProviderFields, ModelProviderId, NewKbChunk,
    NewKbDocument, NewMessage, NewRun, NewSkill, Run, RunId, RunOutcome, ShareConfig, Skill,
    SkillContent, SkillFile, SkillFileInfo, SkillId, Thread, ThreadId, TokenId, Usage, User,
    UserId,
};

use crate::metrics;
use crate::{
    AgentFilter, DeletedProvider, FinishedRun, KbChange, KnowledgeBaseFilter, McpServerFilter,
    ModelSettings, NewToken, NewUser, Result, RunWithInput, SkillFilter, Store, StoreError,
    UserUpdate,
};

/// Wraps a store so its writes survive the caller's cancellation.
pub struct CancelSafe {
    inner: Arc<dyn Store>,
}

impl CancelSafe {
    pub fn wrap(inner: Arc<dyn Store>) -> Arc<dyn Store> {
        Arc::new(Self { inner })
    }

    /// Runs `write` on its own task and waits for it. The task, not the caller, holds the
    /// write's place in the queue gauge and times it, so both count the whole write.
    async fn detached<T, F>(
        &self,
        operation: &'static str,
        write: impl FnOnce(Arc<dyn Store>) -> F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let write = write(Arc::clone(&self.inner));
        let task = tokio::spawn(async move {
            let _queued = metrics::QueuedWrite::enter();
            let started = Instant::now();
            let written = write.await;
            metrics::write_took(operation, started.elapsed());
            written
        });
        task.await
            .map_err(|e| StoreError::Invalid(format!("a store write task failed: {e}")))?
    }
}

#[async_trait]
impl Store for CancelSafe {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    async fn create_user(&self, new: NewUser) -> Result<User> {
        self.detached("create_user", |s| async move { s.create_user(new).await })
            .await
    }
    async fn user(&self, id: UserId) -> Result<Option<User>> {
        self.inner.user(id).await
    }
    async fn user_credentials(&self, username: &str) -> Result<Option<(User, String)>> {
        self.inner.user_credentials(username).await
    }
    async fn list_users(&self) -> Result<Vec<User>> {
        self.inner.list_users().await
    }
    async fn count_users(&self) -> Result<u64> {
        self.inner.count_users().await
    }
    async fn existing_users(&self, ids: &[UserId]) -> Result<Vec<UserId>> {
        self.inner.existing_users(ids).await
    }
    async fn update_user(&self, id: UserId, change: AccountChange) -> Result<UserUpdate> {
        self.detached(
            "update_user",
            |s| async move { s.update_user(id, change).await },
        )
        .await
    }
    async fn set_password(
        &self,
        id: UserId,
        password_hash: &str,
        keep: Option<TokenId>,
    ) -> Result<bool> {
        let password_hash = password_hash.to_owned();
        self.detached("set_password", |s| async move {
            s.set_password(id, &password_hash, keep).await
        })
        .await
    }

    async fn create_token(&self, new: NewToken) -> Result<ApiToken> {
        self.detached("create_token", |s| async move { s.create_token(new).await })
            .await
    }
    async fn token_user(
        &self,
        token_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<(User, ApiToken)>> {
        self.inner.token_user(token_hash, now).await
    }
    async fn touch_token(&self, id: TokenId, at: DateTime<Utc>) -> Result<()> {
        self.detached(
            "touch_token",
            |s| async move { s.touch_token(id, at).await },
        )
        .await
    }
    async fn list_tokens(&self, user: UserId) -> Result<Vec<ApiToken>> {
        self.inner.list_tokens(user).await
    }
    async fn revoke_token(&self, user: UserId, id: TokenId) -> Result<bool> {
        self.detached(
            "revoke_token",
            |s| async move { s.revoke_token(user, id).await },
        )
        .await
    }

    async fn create_agent(&self, draft: &AgentDraft, owner: Option<UserId>) -> Result<Agent> {
        let draft = draft.clone();
        self.detached("create_agent", |s| async move {
            s.create_agent(&draft, owner).await
        })
        .await
    }
    async fn agent(&self, id: AgentId) -> Result<Option<Agent>> {
        self.inner.agent(id).await
    }
    async fn agent_by_slug(&self, slug: &str) -> Result<Option<Agent>> {
        self.inner.agent_by_slug(slug).await
    }
    async fn list_agents(&self, filter: AgentFilter) -> Result<Vec<Agent>> {
        self.inner.list_agents(filter).await
    }
    async fn update_agent(&self, id: AgentId, draft: &AgentDraft) -> Result<Agent> {
        let draft = draft.clone();
        self.detached("update_agent", |s| async move {
            s.update_agent(id, &draft).await
        })
        .await
    }
    async fn delete_agent(&self, id: AgentId) -> Result<bool> {
        self.detached("delete_agent", |s| async move { s.delete_agent(id).await })
            .await
    }
    async fn set_default_agent(&self, id: AgentId) -> Result<Agent> {
        self.detached("set_default_agent", |s| async move {
            s.set_default_agent(id).await
        })
        .await
    }
    async fn default_agent(&self) -> Result<Option<Agent>> {
        self.inner.default_agent().await
    }

    async fn create_skill(&self, new: &NewSkill) -> Result<Skill> {
        let new = new.clone();
        self.detached(
            "create_skill",
            |s| async move { s.create_skill(&new).await },
        )
        .await
    }
    async fn skill(&self, id: SkillId) -> Result<Option<Skill>> {
        self.inner.skill(id).await
    }
    async fn skill_by_name(&self, name: &str) -> Result<Option<Skill>> {
        self.inner.skill_by_name(name).await
    }
    async fn list_skills(&self, filter: SkillFilter) -> Result<Vec<Skill>> {
        self.inner.list_skills(filter).await
    }
    async fn replace_skill_content(&self, id: SkillId, content: &SkillContent) -> Result<Skill> {
        let content = content.clone();
        self.detached("replace_skill_content", |s| async move {
            s.replace_skill_content(id, &content).await
        })
        .await
    }
    async fn update_skill_share(&self, id: SkillId, share: &ShareConfig) -> Result<Skill> {
        let share = share.clone();
        self.detached("update_skill_share", |s| async move {
            s.update_skill_share(id, &share).await
        })
        .await
    }
    async fn delete_skill(&self, id: SkillId) -> Result<bool> {
        self.detached("delete_skill", |s| async move { s.delete_skill(id).await })
            .await
    }
    async fn skill_files(&self, id: SkillId) -> Result<Vec<SkillFileInfo>> {
        self.inner.skill_files(id).await
    }
    async fn skill_file(&self, id: SkillId, path: &str) -> Result<Option<Vec<u8>>> {
        self.inner.skill_file(id, path).await
    }
    async fn skill_contents(&self, id: SkillId) -> Result<Vec<SkillFile>> {
        self.inner.skill_contents(id).await
    }

    async fn create_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
        owner: Option<UserId>,
    ) -> Result<McpServer> {
        let fields = fields.clone();
        self.detached("create_mcp_server", |s| async move {
            s.create_mcp_server(id, &fields, owner).await
        })
        .await
    }
    async fn mcp_server(&self, id: McpServerId) -> Result<Option<McpServer>> {
        self.inner.mcp_server(id).await
    }
    async fn mcp_server_by_slug(&self, slug: &str) -> Result<Option<McpServer>> {
        self.inner.mcp_server_by_slug(slug).await
    }
    async fn list_mcp_servers(&self, filter: McpServerFilter) -> Result<Vec<McpServer>> {
        self.inner.list_mcp_servers(filter).await
    }
    async fn update_mcp_server(
        &self,
        id: McpServerId,
        fields: &McpServerFields,
    ) -> Result<McpServer> {
        let fields = fields.clone();
        self.detached("update_mcp_server", |s| async move {
            s.update_mcp_server(id, &fields).await
        })
        .await
    }
    async fn save_mcp_session(
        &self,
        id: &str,
        state: &str,
        expire_before: DateTime<Utc>,
    ) -> Result<()> {
        let (id, state) = (id.to_owned(), state.to_owned());
        self.detached("save_mcp_session", |s| async move {
            s.save_mcp_session(&id, &state, expire_before).await
        })
        .await
    }
    async fn mcp_session(&self, id: &str) -> Result<Option<String>> {
        self.inner.mcp_session(id).await
    }
    async fn delete_mcp_session(&self, id: &str) -> Result<()> {
        let id = id.to_owned();
        self.detached("delete_mcp_session", |s| async move {
            s.delete_mcp_session(&id).await
        })
        .await
    }
    async fn bind_mcp_session(&self, id: &str, user: UserId) -> Result<bool> {
        let id = id.to_owned();
        self.detached("bind_mcp_session", |s| async move {
            s.bind_mcp_session(&id, user).await
        })
        .await
    }
    async fn mcp_session_owner(&self, id: &str) -> Result<Option<UserId>> {
        self.inner.mcp_session_owner(id).await
    }
    async fn save_mcp_call(&self, session_id: &str, request_id: &str, run: RunId) -> Result<()> {
        let (session_id, request_id) = (session_id.to_owned(), request_id.to_owned());
        self.detached("save_mcp_call", |s| async move {
            s.save_mcp_call(&session_id, &request_id, run).await
        })
        .await
    }
    async fn mcp_call_run(&self, session_id: &str, request_id: &str) -> Result<Option<RunId>> {
        self.inner.mcp_call_run(session_id, request_id).await
    }
    async fn delete_mcp_call(&self, session_id: &str, request_id: &str) -> Result<()> {
        let (session_id, request_id) = (session_id.to_owned(), request_id.to_owned());
        self.detached("delete_mcp_call", |s| async move {
            s.delete_mcp_call(&session_id, &request_id).await
        })
        .await
    }
    async fn delete_mcp_server(&self, id: McpServerId) -> Result<bool> {
        self.detached("delete_mcp_server", |s| async move {
            s.delete_mcp_server(id).await
        })
        .await
    }

    async fn create_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
        owner: Option<UserId>,
    ) -> Result<KnowledgeBase> {
        let fields = fields.clone();
        self.detached("create_knowledge_base", |s| async move {
            s.create_knowledge_base(id, &fields, owner).await
        })
        .await
    }
    async fn knowledge_base(&self, id: KnowledgeBaseId) -> Result<Option<KnowledgeBase>> {
        self.inner.knowledge_base(id).await
    }
    async fn knowledge_base_by_slug(&self, slug: &str) -> Result<Option<KnowledgeBase>> {
        self.inner.knowledge_base_by_slug(slug).await
    }
    async fn list_knowledge_bases(
        &self,
        filter: KnowledgeBaseFilter,
    ) -> Result<Vec<KnowledgeBase>> {
        self.inner.list_knowledge_bases(filter).await
    }
    async fn update_knowledge_base(
        &self,
        id: KnowledgeBaseId,
        fields: &KnowledgeBaseFields,
    ) -> Result<KnowledgeBase> {
        let fields = fields.clone();
        self.detached("update_knowledge_base", |s| async move {
            s.update_knowledge_base(id, &fields).await
        })
        .await
    }
    async fn delete_knowledge_base(&self, id: KnowledgeBaseId) -> Result<bool> {
        self.detached("delete_knowledge_base", |s| async move {
            s.delete_knowledge_base(id).await
        })
        .await
    }
    async fn put_kb_document(
        &self,
        kb_id: KnowledgeBaseId,
        new: NewKbDocument,
    ) -> Result<KbDocument> {
        self.detached("put_kb_document", |s| async move {
            s.put_kb_document(kb_id, new).await
        })
        .await
    }
    async fn kb_documents(&self, kb_id: KnowledgeBaseId) -> Result<Vec<KbDocument>> {
        self.inner.kb_documents(kb_id).await
    }
    async fn kb_document(&self, id: KbDocumentId) -> Result<Option<KbDocument>> {
        self.inner.kb_document(id).await
    }
    async fn kb_document_file(&self, id: KbDocumentId) -> Result<Option<Vec<u8>>> {
        self.inner.kb_document_file(id).await
    }
    async fn delete_kb_document(&self, id: KbDocumentId) -> Result<bool> {
        self.detached("delete_kb_document", |s| async move {
            s.delete_kb_document(id).await
        })
        .await
    }
    async fn kb_claimable(&self, now: DateTime<Utc>) -> Result<bool> {
        self.inner.kb_claimable(now).await
    }
    async fn claim_kb_document(
        &self,
        now: DateTime<Utc>,
        lease: std::time::Duration,
    ) -> Result<Option<KbDocument>> {
        self.detached("claim_kb_document", move |s| async move {
            s.claim_kb_document(now, lease).await
        })
        .await
    }
    async fn renew_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        progress: f32,
        lease_until: DateTime<Utc>,
    ) -> Result<bool> {
        self.detached("renew_kb_document", move |s| async move {
            s.renew_kb_document(id, version, progress, lease_until)
                .await
        })
        .await
    }
    async fn finish_kb_document(
        &self,
        id: KbDocumentId,
        version: u32,
        chunks: &[NewKbChunk],
    ) -> Result<bool> {
        let chunks = chunks.to_vec();
        self.detached("finish_kb_document", move |s| async move {
            s.finish_kb_document(id, version, &chunks).await
        })
        .await
    }
    async fn fail_kb_document(&self, id: KbDocumentId, version: u32, error: &str) -> Result<bool> {
        let error = error.to_owned();
        self.detached("fail_kb_document", move |s| async move {
            s.fail_kb_document(id, version, &error).await
        })
        .await
    }
    async fn release_kb_document(&self, id: KbDocumentId, version: u32) -> Result<bool> {
        self.detached("release_kb_document", move |s| async move {
            s.release_kb_document(id, version).await
        })
        .await
    }
    async fn retry_kb_document(&self, id: KbDocumentId) -> Result<bool> {
        self.detached("retry_kb_document", |s| async move {
            s.retry_kb_document(id).await
        })
        .await
    }
    async fn kb_chunks(&self, document_id: KbDocumentId) -> Result<Vec<KbChunk>> {
        self.inner.kb_chunks(document_id).await
    }
    async fn kb_chunks_by_ids(&self, ids: &[(KbDocumentId, u32)]) -> Result<Vec<KbChunk>> {
        self.inner.kb_chunks_by_ids(ids).await
    }
    async fn kb_chunks_page(
        &self,
        kb_id: KnowledgeBaseId,
        after: Option<(KbDocumentId, u32)>,
        limit: u32,
    ) -> Result<Vec<KbChunk>> {
        self.inner.kb_chunks_page(kb_id, after, limit).await
    }
    async fn kb_changes_since(&self, seq: i64, limit: u32) -> Result<Vec<KbChange>> {
        self.inner.kb_changes_since(seq, limit).await
    }
    async fn kb_change_head(&self) -> Result<i64> {
        self.inner.kb_change_head().await
    }

    async fn create_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
        created_by: Option<UserId>,
    ) -> Result<ModelProvider> {
        let fields = fields.clone();
        self.detached("create_model_provider", move |s| async move {
            s.create_model_provider(id, &fields, created_by).await
        })
        .await
    }
    async fn model_provider(&self, id: ModelProviderId) -> Result<Option<ModelProvider>> {
        self.inner.model_provider(id).await
    }
    async fn list_model_providers(&self) -> Result<Vec<ModelProvider>> {
        self.inner.list_model_providers().await
    }
    async fn update_model_provider(
        &self,
        id: ModelProviderId,
        fields: &ModelProviderFields,
    ) -> Result<ModelProvider> {
        let fields = fields.clone();
        self.detached("update_model_provider", move |s| async move {
            s.update_model_provider(id, &fields).await
        })
        .await
    }
    async fn set_model_provider_models(
        &self,
        id: ModelProviderId,
        models: &[String],
        refreshed_at: DateTime<Utc>,
    ) -> Result<ModelProvider> {
        let models = models.to_vec();
        self.detached("set_model_provider_models", move |s| async move {
            s.set_model_provider_models(id, &models, refreshed_at).await
        })
        .await
    }
    async fn delete_model_provider(&self, id: ModelProviderId) -> Result<Option<DeletedProvider>> {
        self.detached("delete_model_provider", move |s| async move {
            s.delete_model_provider(id).await
        })
        .await
    }
    async fn model_settings(&self) -> Result<ModelSettings> {
        self.inner.model_settings().await
    }
    async fn model_settings_version(&self) -> Result<i64> {
        self.inner.model_settings_version().await
    }
    async fn set_default_model(&self, model: Option<&str>) -> Result<ModelSettings> {
        let model = model.map(str::to_string);
        self.detached("set_default_model", move |s| async move {
            s.set_default_model(model.as_deref()).await
        })
        .await
    }

    async fn create_thread(&self, thread: &Thread) -> Result<Thread> {
        let thread = thread.clone();
        self.detached("create_thread", |s| async move {
            s.create_thread(&thread).await
        })
        .await
    }
    async fn thread(&self, id: &ThreadId) -> Result<Option<Thread>> {
        self.inner.thread(id).await
    }
    async fn list_threads(&self, user: UserId) -> Result<Vec<Thread>> {
        self.inner.list_threads(user).await
    }
    async fn child_threads(&self, parent: &ThreadId) -> Result<Vec<Thread>> {
        self.inner.child_threads(parent).await
    }
    async fn rename_thread(&self, id: &ThreadId, title: &str) -> Result<Thread> {
        let (id, title) = (id.clone(), title.to_string());
        self.detached("rename_thread", |s| async move {
            s.rename_thread(&id, &title).await
        })
        .await
    }
    async fn delete_thread(&self, id: &ThreadId) -> Result<bool> {
        let id = id.clone();
        self.detached(
            "delete_thread",
            |s| async move { s.delete_thread(&id).await },
        )
        .await
    }

    async fn append_message(&self, message: &NewMessage) -> Result<Message> {
        let message = message.clone();
        self.detached("append_message", |s| async move {
            s.append_message(&message).await
        })
        .await
    }
    async fn messages(&self, thread: &ThreadId) -> Result<Vec<Message>> {
        self.inner.messages(thread).await
    }
    async fn all_messages(&self, thread: &ThreadId) -> Result<Vec<Message>> {
        self.inner.all_messages(thread).await
    }
    async fn create_run_with_input(
        &self,
        new: &NewRun,
        replace_from: Option<MessageId>,
    ) -> Result<RunWithInput> {
        let new = new.clone();
        self.detached("create_run_with_input", |s| async move {
            s.create_run_with_input(&new, replace_from).await
        })
        .await
    }

    async fn create_run(&self, new: &NewRun) -> Result<Run> {
        let new = new.clone();
        self.detached("create_run", |s| async move { s.create_run(&new).await })
            .await
    }
    async fn run(&self, id: RunId) -> Result<Option<Run>> {
        self.inner.run(id).await
    }
    async fn active_run(&self, thread: &ThreadId) -> Result<Option<Run>> {
        self.inner.active_run(thread).await
    }
    async fn agent_active_run(&self, agent: AgentId) -> Result<Option<Run>> {
        self.inner.agent_active_run(agent).await
    }
    async fn thread_runs(&self, thread: &ThreadId) -> Result<Vec<Run>> {
        self.inner.thread_runs(thread).await
    }
    async fn child_runs(&self, parent_run: RunId) -> Result<Vec<Run>> {
        self.inner.child_runs(parent_run).await
    }
    async fn subagent_runs(&self, thread: &ThreadId) -> Result<Vec<Run>> {
        self.inner.subagent_runs(thread).await
    }
    async fn mark_run_running(&self, id: RunId) -> Result<Run> {
        self.detached("mark_run_running", |s| async move {
            s.mark_run_running(id).await
        })
        .await
    }
    async fn set_run_usage(&self, id: RunId, usage: Usage) -> Result<()> {
        self.detached("set_run_usage", |s| async move {
            s.set_run_usage(id, usage).await
        })
        .await
    }
    async fn finish_run(&self, id: RunId, outcome: &RunOutcome) -> Result<FinishedRun> {
        let outcome = outcome.clone();
        self.detached(
            "finish_run",
            |s| async move { s.finish_run(id, &outcome).await },
        )
        .await
    }
    async fn interrupt_active_runs(&self) -> Result<Vec<RunId>> {
        self.detached("interrupt_active_runs", |s| async move {
            s.interrupt_active_runs().await
        })
        .await
    }

    async fn renew_leases(&self, owner: &str, expires_ms: i64) -> Result<Vec<RunId>> {
        let owner = owner.to_string();
        self.detached("renew_leases", move |s| async move {
            s.renew_leases(&owner, expires_ms).await
        })
        .await
    }

    async fn reap_expired_runs(&self, now_ms: i64) -> Result<Vec<RunId>> {
        self.detached("reap_expired_runs", move |s| async move {
            s.reap_expired_runs(now_ms).await
        })
        .await
    }
}
