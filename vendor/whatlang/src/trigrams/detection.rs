use std::sync::OnceLock;

use hashbrown::HashMap;

use super::utils::{TrigramsWithPositions, get_trigrams_with_positions};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use super::LangProfileList;
#[cfg(test)]
use super::LangProfile;
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE, Trigram};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(iquery.multi_lang_script);
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, lang_profile_list)
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let TrigramsWithPositions {
        trigram_positions, ..
    } = get_trigrams_with_positions(&text.lowercase());
    let unique_trigrams_count = trigram_positions.len();

    let distances = distances(lang_profile_list, &trigram_positions);
    for (&(lang, _), &dist) in lang_profile_list.iter().zip(&distances) {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        lang_distances.push(((lang), dist));
    }

    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// wikidex: the profiles of a script's languages turned inside out, made once per list: each
/// trigram → the languages whose profile holds it, with its rank there. A text's distance to
/// every language then takes one look-up per trigram of the text (at most 600) instead of one
/// per trigram of every profile (300 for each of the script's languages: 11,100 for Latin's 37).
struct Inverted {
    places: HashMap<Trigram, Vec<(u16, u16)>>,
}

static INVERTED: [OnceLock<Inverted>; 5] = [const { OnceLock::new() }; 5];

impl Inverted {
    fn of(list: LangProfileList) -> &'static Inverted {
        let scripts = [LATIN_LANGS, CYRILLIC_LANGS, ARABIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS];
        let at = scripts
            .iter()
            .position(|l| std::ptr::eq(*l, list))
            .expect("a script's profile list");
        INVERTED[at].get_or_init(|| {
            let mut places: HashMap<Trigram, Vec<(u16, u16)>> = HashMap::new();
            for (l, &(_, trigrams)) in list.iter().enumerate() {
                for (i, &trigram) in trigrams.iter().enumerate() {
                    places.entry(trigram).or_default().push((l as u16, i as u16));
                }
            }
            Inverted { places }
        })
    }

    fn places(&self, trigram: &Trigram) -> &[(u16, u16)] {
        self.places.get(trigram).map_or(&[], Vec::as_slice)
    }
}

/// wikidex: the distance of the text to each language of `list`, as upstream's
/// `calculate_distance` gives it, from the text's trigrams found in the profiles
/// ([`Inverted`]) rather than from a look-up of each profile trigram in the text's.
fn distances(list: LangProfileList, text_trigrams: &HashMap<Trigram, u32>) -> Vec<u32> {
    let inverted = Inverted::of(list);
    let mut found = vec![0i64; list.len()];
    for (trigram, &n) in text_trigrams {
        for &(lang, i) in inverted.places(trigram) {
            found[lang as usize] += (n as i64 - i as i64).abs() - MAX_TRIGRAM_DISTANCE as i64;
        }
    }
    list.iter()
        .zip(found)
        .map(|(&(_, profile), found)| distance(profile.len(), found, text_trigrams.len()))
        .collect()
}

/// wikidex: upstream's `calculate_distance` from `found`, the sum over the profile's trigrams
/// that the text holds of `|n - i| - MAX_TRIGRAM_DISTANCE`: every trigram of the profile
/// counts `MAX_TRIGRAM_DISTANCE`, less that for those the text holds.
#[inline]
fn distance(profile_len: usize, found: i64, text_trigrams: usize) -> u32 {
    let all_missing = profile_len as i64 * MAX_TRIGRAM_DISTANCE as i64;
    let mut total_dist = (all_missing + found) as u32;

    let count = text_trigrams as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

/// Upstream's distance of a text to one language: the oracle [`distances`] is tested against.
#[cfg(test)]
fn calculate_distance(lang_trigrams: LangProfile, text_trigrams: &HashMap<Trigram, u32>) -> u32 {
    let mut total_dist = 0u32;

    for (i, &trigram) in lang_trigrams.iter().enumerate() {
        let dist = match text_trigrams.get(&trigram) {
            Some(&n) => (n as i32 - i as i32).unsigned_abs(),
            None => MAX_TRIGRAM_DISTANCE,
        };
        total_dist += dist;
    }

    let count = text_trigrams.len() as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wikidex: the distances from the inverted profiles are upstream's, for every language
    /// of every script, on texts of many languages and lengths.
    #[test]
    fn distances_are_upstreams() {
        let mut texts: Vec<String> = [
            "Die Ordnung muss für immer in diesem Codebase bleiben",
            "The quick brown fox jumps over the lazy dog, again and again, until dusk.",
            "Le système de fichiers est sauvegardé chaque nuit et conservé trente jours.",
            "Привет, как дела? Это текст на русском языке, довольно длинный для проверки.",
            "مرحبا بكم في هذا النص العربي الطويل نسبيا للاختبار",
            "यह हिंदी में लिखा गया एक छोटा सा वाक्य है जो परीक्षण के लिए है",
            "זהו טקסט בעברית שנכתב לצורך בדיקה של זיהוי השפה",
            "a",
            "",
        ]
        .iter()
        .map(|t| t.to_string())
        .collect();
        // Random words of each script's letters, up to thousands of distinct trigrams: texts
        // whose 600 ranked trigrams reach past every profile's 300.
        let alphabets = [
            "abcdefghijklmnopqrstuvwxyzéèüöäñçøåłż",
            "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїє",
            "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
            "अआइईउऊएऐओऔकखगघचछजझटठडढतथदधनपफबभमयरलवशसह",
            "אבגדהוזחטיכלמנסעפצקרשת",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for letters in alphabets {
            let letters: Vec<char> = letters.chars().collect();
            for words in [3, 30, 300, 3000] {
                let text: Vec<String> = (0..words)
                    .map(|_| (0..2 + next(7)).map(|_| letters[next(letters.len())]).collect())
                    .collect();
                texts.push(text.join(" "));
            }
        }
        let scripts = [LATIN_LANGS, CYRILLIC_LANGS, ARABIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS];
        for text in &texts {
            let text = Text::new(text);
            let positions = get_trigrams_with_positions(&text.lowercase()).trigram_positions;
            for list in scripts {
                let upstream: Vec<u32> = list
                    .iter()
                    .map(|&(_, profile)| calculate_distance(profile, &positions))
                    .collect();
                assert_eq!(distances(list, &positions), upstream, "{:?}", &text);
            }
        }
    }

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}
