//! What the Skills plug-in adds to each run's start: refreshing the user's projection (cold:
//! every skill written; warm: nothing changed) and building the catalog (store rows, built-ins,
//! a scan of the personal folder) plus the prompt block.
//!
//! `cargo bench -p ars-runtime --bench skills -- [SHARED] [PERSONAL]` (defaults 50 and 10).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use ars_domain::{Caller, NewSkill, Role, ShareConfig, SkillContent, SkillFile};
use ars_runtime::skills::SkillLibrary;
use ars_sandbox::{LocalSandbox, Sandbox, SandboxConfig, Scope};
use ars_skills::prompt_block;
use ars_store::{NewUser, SkillStore, Store};

const ROUNDS: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn skill_md(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: Helps with {name}: a description of ordinary length that says when to use it.\n---\n{}\n",
        "Body text. ".repeat(200)
    )
}

async fn timed<F, Fut>(label: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut times = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t = Instant::now();
        f().await;
        times.push(t.elapsed());
    }
    times.sort();
    println!(
        "{label:<40} p50 {:>9.3?}  p95 {:>9.3?}  max {:>9.3?}",
        percentile(&times, 0.5),
        percentile(&times, 0.95),
        times[times.len() - 1]
    );
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<usize>().ok());
    let shared = args.next().unwrap_or(50);
    let personal = args.next().unwrap_or(10);
    let (store, _db) = ars_store::test_support::sqlite_fresh().await;
    let store: Arc<dyn Store> = Arc::new(store);
    let dir = tempfile::tempdir().unwrap();
    let sandbox: Arc<dyn Sandbox> = Arc::new(LocalSandbox::new(SandboxConfig::new(
        dir.path().to_path_buf(),
    )));
    let user = store
        .create_user(NewUser {
            username: "bench".into(),
            password_hash: "x".into(),
            role: Role::User,
        })
        .await
        .unwrap();
    let caller = Caller::from(&user);
    for i in 0..shared {
        let name = format!("shared-{i}");
        let mut files = vec![SkillFile {
            path: "SKILL.md".into(),
            content: skill_md(&name).into_bytes(),
        }];
        for f in 0..4 {
            files.push(SkillFile {
                path: format!("references/r{f}.md"),
                content: vec![b'x'; 2048],
            });
        }
        store
            .create_skill(&NewSkill {
                owner_id: Some(user.id),
                share_config: ShareConfig::default(),
                content: SkillContent {
                    name: name.clone(),
                    description: format!("Helps with {name}"),
                    license: None,
                    compatibility: None,
                    metadata: Default::default(),
                    allowed_tools: Vec::new(),
                    version: format!("v-{name}"),
                    files,
                },
            })
            .await
            .unwrap();
    }
    let scope = Scope::new(user.id, "bench", "conversations/bench").unwrap();
    sandbox.prepare(&scope).await.unwrap();
    for i in 0..personal {
        let name = format!("mine-{i}");
        sandbox
            .write(
                &scope,
                &format!("/home/gem/user-data/agents/skills/{name}/SKILL.md"),
                &skill_md(&name),
            )
            .await
            .unwrap();
    }
    let library = SkillLibrary::new(
        Arc::clone(&store) as Arc<dyn SkillStore>,
        Arc::clone(&sandbox),
    );
    println!(
        "{shared} shared skills (5 files, ~10 KiB each), {} built-in, {personal} personal",
        library.builtin().len()
    );

    let t = Instant::now();
    library.project(&caller).await.unwrap();
    println!(
        "{:<40} {:>9.3?}",
        "project, cold (every skill written)",
        t.elapsed()
    );
    timed("project, warm (nothing changed)", || async {
        library.project(&caller).await.unwrap();
    })
    .await;
    timed("catalog (store + built-in + scan)", || async {
        library.catalog(&caller, &scope).await.unwrap();
    })
    .await;
    timed("refresh = warm projection + catalog", || async {
        library.refresh(&caller, &scope).await.unwrap();
    })
    .await;
    let catalog = library.catalog(&caller, &scope).await.unwrap();
    let (offered, _) = catalog.select(&["*".to_string()]);
    timed("select all + prompt block (6000 chars)", || async {
        let (offered, _) = catalog.select(&["*".to_string()]);
        std::hint::black_box(prompt_block(&offered, &catalog.skipped, 6_000));
    })
    .await;
    let block = prompt_block(&offered, &catalog.skipped, 6_000);
    println!(
        "prompt block: {} skills listed in {} chars",
        offered.len(),
        block.chars().count()
    );
}
