//! List filtering and order: the SQL filters (agents and skills) must agree with
//! `Caller::can_view`.

use std::collections::BTreeSet;

use ars_domain::ids::GENERAL_PURPOSE_ID;
use ars_domain::{Agent, AgentDraft, Backend, Caller, Role, Skill, Visibility};
use ars_store::{AgentFilter, AgentKinds, SkillFilter, Store};

use crate::fixtures::{draft, everything, new_skill, shares, subagent_draft, user, wide_shares};

fn slugs(agents: &[Agent]) -> BTreeSet<&str> {
    agents.iter().map(|a| a.slug.as_str()).collect()
}

pub async fn check_list_filter_matrix(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let manager = user(store, "manager").await;
    let listed = user(store, "listed").await;
    let stranger = user(store, "stranger").await;

    // Every visibility × backend, owned by `owner`, listing `listed` and managed by `manager`.
    for visibility in [Visibility::Private, Visibility::Users, Visibility::Public] {
        for backend in Backend::ALL {
            let slug = format!(
                "{}-{}",
                visibility.as_str(),
                backend.as_str().to_lowercase()
            );
            let agent = AgentDraft {
                backend,
                share_config: shares(visibility, &[listed.id], &[manager.id]),
                ..draft(&slug)
            };
            store.create_agent(&agent, Some(owner.id)).await.unwrap();
        }
    }
    // A `users` agent that lists nobody, and a private system-owned one.
    let unlisted = AgentDraft {
        share_config: shares(Visibility::Users, &[], &[]),
        ..draft("users-unlisted")
    };
    store.create_agent(&unlisted, Some(owner.id)).await.unwrap();
    store
        .create_agent(&draft("system-private"), None)
        .await
        .unwrap();

    let all = store.list_agents(everything()).await.unwrap();
    assert_eq!(all.len(), 9);
    let normal = AgentFilter {
        visible_to: None,
        kinds: AgentKinds::Chat,
    };
    let expected: Vec<Agent> = all.iter().filter(|a| !a.is_subagent).cloned().collect();
    assert_eq!(store.list_agents(normal).await.unwrap(), expected);

    for viewer in [&owner, &manager, &listed, &stranger] {
        let caller = Caller {
            id: viewer.id,
            role: Role::User,
        };
        for kinds in [AgentKinds::All, AgentKinds::Chat, AgentKinds::Subagents] {
            let filter = AgentFilter {
                visible_to: Some(viewer.id),
                kinds,
            };
            let got = store.list_agents(filter).await.unwrap();
            let expected: Vec<Agent> = all
                .iter()
                .filter(|a| {
                    caller.can_view(a)
                        && match kinds {
                            AgentKinds::All => true,
                            AgentKinds::Chat => !a.is_subagent,
                            AgentKinds::Subagents => a.is_subagent,
                        }
                })
                .cloned()
                .collect();
            assert_eq!(got, expected, "{} {filter:?}", viewer.username);
        }
    }

    // The same rules spelled out, so the check does not rest on `can_view` alone.
    let visible = |viewer: &ars_domain::User| {
        let filter = AgentFilter {
            visible_to: Some(viewer.id),
            kinds: AgentKinds::All,
        };
        async move { store.list_agents(filter).await.unwrap() }
    };
    let every_owned: BTreeSet<&str> = [
        "general-purpose",
        "private-defaultbackend",
        "private-subagentbackend",
        "users-defaultbackend",
        "users-subagentbackend",
        "public-defaultbackend",
        "public-subagentbackend",
    ]
    .into();
    let mut owned = every_owned.clone();
    owned.insert("users-unlisted");
    assert_eq!(slugs(&visible(&owner).await), owned);
    assert_eq!(slugs(&visible(&manager).await), every_owned);
    assert_eq!(
        slugs(&visible(&listed).await),
        [
            "general-purpose",
            "users-defaultbackend",
            "users-subagentbackend",
            "public-defaultbackend",
            "public-subagentbackend",
        ]
        .into()
    );
    let strangers = visible(&stranger).await;
    assert_eq!(
        slugs(&strangers),
        [
            "general-purpose",
            "public-defaultbackend",
            "public-subagentbackend"
        ]
        .into()
    );
    let chat_list = AgentFilter {
        visible_to: Some(stranger.id),
        kinds: AgentKinds::Chat,
    };
    assert_eq!(
        slugs(&store.list_agents(chat_list).await.unwrap()),
        ["public-defaultbackend"].into()
    );
    let subagents = AgentFilter {
        visible_to: Some(stranger.id),
        kinds: AgentKinds::Subagents,
    };
    assert_eq!(
        slugs(&store.list_agents(subagents).await.unwrap()),
        ["general-purpose", "public-subagentbackend"].into()
    );
    // An admin's list of subagents: every subagent, in the list's order.
    let every_subagent = AgentFilter {
        visible_to: None,
        kinds: AgentKinds::Subagents,
    };
    let expected: Vec<Agent> = all.iter().filter(|a| a.is_subagent).cloned().collect();
    assert_eq!(store.list_agents(every_subagent).await.unwrap(), expected);
}

pub async fn check_list_order(store: &dyn Store) {
    let named = |slug: &str, name: &str| AgentDraft {
        name: name.to_string(),
        share_config: shares(Visibility::Public, &[], &[]),
        ..draft(slug)
    };
    // Byte order: uppercase before lowercase, and equal names fall back to the id.
    for (slug, name) in [
        ("b", "beta"),
        ("z", "Zulu"),
        ("a", "alpha"),
        ("t1", "twin"),
        ("t2", "twin"),
        ("aa", "Alpha"),
    ] {
        store.create_agent(&named(slug, name), None).await.unwrap();
    }
    let all = store.list_agents(everything()).await.unwrap();
    assert_eq!(all[0].id, GENERAL_PURPOSE_ID, "built-in rows come first");
    let rest: Vec<(&str, String)> = all[1..]
        .iter()
        .map(|a| (a.name.as_str(), a.id.to_string()))
        .collect();
    let mut sorted = rest.clone();
    sorted.sort();
    assert_eq!(rest, sorted);
    let names: Vec<&str> = rest.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, ["Alpha", "Zulu", "alpha", "beta", "twin", "twin"]);
}

fn skill_names(skills: &[Skill]) -> Vec<&str> {
    skills.iter().map(|s| s.name.as_str()).collect()
}

pub async fn check_skill_list_filter_matrix(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let manager = user(store, "manager").await;
    let listed = user(store, "listed").await;
    let stranger = user(store, "stranger").await;

    // Every visibility, owned by `owner`, listing `listed` and managed by `manager`; a `users`
    // skill that lists nobody; a private, ownerless one that only `manager` manages.
    for visibility in [Visibility::Private, Visibility::Users, Visibility::Public] {
        let share = shares(visibility, &[listed.id], &[manager.id]);
        let skill = new_skill(visibility.as_str(), Some(owner.id), share);
        store.create_skill(&skill).await.unwrap();
    }
    let unlisted = new_skill(
        "users-unlisted",
        Some(owner.id),
        shares(Visibility::Users, &[], &[]),
    );
    store.create_skill(&unlisted).await.unwrap();
    let orphan = new_skill(
        "orphan",
        None,
        shares(Visibility::Private, &[], &[manager.id]),
    );
    store.create_skill(&orphan).await.unwrap();

    let all = store.list_skills(SkillFilter::default()).await.unwrap();
    assert_eq!(
        skill_names(&all),
        ["orphan", "private", "public", "users", "users-unlisted"],
        "every skill, by name"
    );
    for viewer in [&owner, &manager, &listed, &stranger] {
        let caller = Caller {
            id: viewer.id,
            role: Role::User,
        };
        let filter = SkillFilter {
            visible_to: Some(viewer.id),
        };
        let got = store.list_skills(filter).await.unwrap();
        let expected: Vec<Skill> = all.iter().filter(|s| caller.can_view(s)).cloned().collect();
        assert_eq!(got, expected, "{}", viewer.username);
    }

    // The same rules spelled out, so the check does not rest on `can_view` alone.
    let visible = |viewer: &ars_domain::User| {
        let filter = SkillFilter {
            visible_to: Some(viewer.id),
        };
        async move { store.list_skills(filter).await.unwrap() }
    };
    assert_eq!(
        skill_names(&visible(&owner).await),
        ["private", "public", "users", "users-unlisted"]
    );
    assert_eq!(
        skill_names(&visible(&manager).await),
        ["orphan", "private", "public", "users"]
    );
    assert_eq!(skill_names(&visible(&listed).await), ["public", "users"]);
    assert_eq!(skill_names(&visible(&stranger).await), ["public"]);
}

pub async fn check_skills_list_by_name_in_byte_order(store: &dyn Store) {
    // Uppercase before lowercase, and multi-byte names after ASCII ones.
    for name in ["beta", "Zulu", "说明", "alpha", "Alpha"] {
        let skill = new_skill(name, None, shares(Visibility::Public, &[], &[]));
        store.create_skill(&skill).await.unwrap();
    }
    let all = store.list_skills(SkillFilter::default()).await.unwrap();
    assert_eq!(
        skill_names(&all),
        ["Alpha", "Zulu", "alpha", "beta", "说明"]
    );
}

/// Every read of a shared resource — by id, by its name or slug, the default agent, every
/// list — answers exactly the share rows it holds: many of both roles, or none beside them.
pub async fn check_every_read_of_a_shared_resource_answers_exactly_its_shares(store: &dyn Store) {
    let owner = user(store, "owner").await;
    let (many, listed, managers) = wide_shares(store, 40, 3).await;
    let want = many.clone().normalized();
    let none = shares(Visibility::Public, &[], &[]);

    // Agents: a chat agent and a subagent with many shares, each beside one with none.
    let wide = AgentDraft {
        share_config: many.clone(),
        is_default: true,
        ..draft("wide")
    };
    let wide = store.create_agent(&wide, Some(owner.id)).await.unwrap();
    assert_eq!(wide.share_config, want);
    let bare = AgentDraft {
        share_config: none.clone(),
        ..draft("bare")
    };
    store.create_agent(&bare, Some(owner.id)).await.unwrap();
    let wide_sub = AgentDraft {
        share_config: many.clone(),
        ..subagent_draft("wide-sub")
    };
    store.create_agent(&wide_sub, Some(owner.id)).await.unwrap();
    let by_id = store.agent(wide.id).await.unwrap().unwrap();
    assert_eq!(by_id, wide);
    assert_eq!(
        store.agent_by_slug("wide").await.unwrap(),
        Some(wide.clone())
    );
    assert_eq!(store.default_agent().await.unwrap(), Some(wide.clone()));
    for kinds in [AgentKinds::All, AgentKinds::Chat, AgentKinds::Subagents] {
        for visible_to in [None, Some(listed[7]), Some(managers[2])] {
            let got = store
                .list_agents(AgentFilter { visible_to, kinds })
                .await
                .unwrap();
            for agent in &got {
                let expected = match agent.slug.as_str() {
                    "wide" | "wide-sub" => &want,
                    _ => &none,
                };
                assert_eq!(&agent.share_config, expected, "{} in {kinds:?}", agent.slug);
            }
            assert!(!got.is_empty(), "{kinds:?} for {visible_to:?}");
        }
    }

    // Skills.
    let skill = store
        .create_skill(&new_skill("wide-skill", Some(owner.id), many.clone()))
        .await
        .unwrap();
    assert_eq!(skill.share_config, want);
    store
        .create_skill(&new_skill("bare-skill", Some(owner.id), none.clone()))
        .await
        .unwrap();
    assert_eq!(store.skill(skill.id).await.unwrap(), Some(skill.clone()));
    assert_eq!(
        store.skill_by_name("wide-skill").await.unwrap(),
        Some(skill.clone())
    );
    for visible_to in [None, Some(listed[39]), Some(managers[0])] {
        let got = store.list_skills(SkillFilter { visible_to }).await.unwrap();
        assert_eq!(got.len(), 2, "{visible_to:?}");
        for listed_skill in got {
            let expected = if listed_skill.id == skill.id {
                &want
            } else {
                &none
            };
            assert_eq!(&listed_skill.share_config, expected);
        }
    }
}
