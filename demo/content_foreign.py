"""Sentences in French, German, Spanish, Russian, Japanese and Korean for the other_lang defect."""

from __future__ import annotations

import random

from demo.content_fill import fill, items

FOREIGN_LANGS = ("fr", "de", "es", "ru", "ja", "ko")

_POOLS: dict[str, dict[str, tuple[str, ...]]] = {
    "fr": {
        "city": items("Lyon, Marseille, Toulouse, Nantes, Bordeaux, Lille, Rennes, Grenoble, Dijon, Strasbourg, Montpellier, Nice, Angers, Tours, Limoges"),
        "name": items("Marie Dupont, Jean Martin, Claire Bernard, Luc Moreau, Sophie Laurent, Pierre Lefèvre, Julie Girard, Antoine Roux, Camille Fournier, Nicolas Mercier"),
    },
    "de": {
        "city": items("Leipzig, Dresden, Freiburg, Münster, Bremen, Hannover, Kassel, Erfurt, Rostock, Augsburg, Regensburg, Heidelberg, Bonn, Kiel, Ulm"),
        "name": items("Anna Müller, Thomas Schmidt, Julia Wagner, Michael Becker, Laura Hoffmann, Stefan Schulz, Katrin Weber, Jonas Fischer, Sabine Koch, Lukas Richter"),
    },
    "es": {
        "city": items("Sevilla, Valencia, Zaragoza, Málaga, Bilbao, Granada, Córdoba, Salamanca, Oviedo, Murcia, Cádiz, Toledo, Burgos, León, Almería"),
        "name": items("María García, José Fernández, Lucía Martínez, Carlos Sánchez, Ana López, Javier Romero, Elena Torres, Pablo Ruiz, Carmen Navarro, Diego Morales"),
    },
    "ru": {
        "city": items("Новосибирск, Екатеринбург, Омск, Томск, Иркутск, Владивосток, Хабаровск, Ярославль, Калининград, Псков, Смоленск, Мурманск"),
        "name": items("Иван Петров, Алексей Смирнов, Дмитрий Кузнецов, Сергей Волков, Андрей Соколов, Михаил Попов, Николай Лебедев, Павел Морозов, Олег Васильев, Артём Новиков"),
    },
    "ja": {
        "city": items("札幌, 仙台, 金沢, 静岡, 岡山, 広島, 松山, 熊本, 長崎, 新潟, 函館, 奈良"),
        "name": items("田中, 佐藤, 鈴木, 高橋, 渡辺, 山本, 中村, 小林, 加藤, 吉田"),
    },
    "ko": {
        "city": items("부산, 대구, 인천, 광주, 대전, 울산, 수원, 전주, 청주, 춘천, 포항, 제주"),
        "name": items("김민준, 이서연, 박지훈, 최유진, 정하은, 강도윤, 조수빈, 윤지호, 장예린, 임현우"),
    },
}

_SENTENCES: dict[str, tuple[str, ...]] = {
    "fr": (
        "La ville de {city} a présenté un nouveau projet pour améliorer les transports publics.",
        "Selon les responsables, les travaux devraient durer environ {#n} mois.",
        "{name} explique que les habitants attendent ce changement depuis longtemps.",
        "Le musée municipal a accueilli plus de {#big} visiteurs l'année dernière.",
        "Les agriculteurs de la région s'inquiètent de la sécheresse et du prix de l'eau.",
        "En {#year}, une grande partie du centre historique a été rénovée.",
        "Le conseil municipal se réunira la semaine prochaine pour discuter du budget.",
        "Beaucoup de jeunes quittent les villages pour trouver du travail à {city}.",
        "La bibliothèque propose désormais des ateliers gratuits pour les enfants.",
        "D'après une étude récente, près de {#pct} pour cent des familles utilisent le vélo chaque jour.",
        "Le marché du samedi attire des producteurs venus de toute la vallée.",
        "Les écoles de {city} manquent encore d'enseignants qualifiés.",
        "{name} a fondé une petite entreprise de menuiserie il y a {#n} ans.",
        "Le festival de musique aura lieu au bord du lac, comme chaque été.",
        "Les chercheurs de l'université étudient la qualité de l'air dans les quartiers anciens.",
        "Il faut environ {#n} minutes en train pour rejoindre {city} depuis la gare centrale.",
        "La rivière a débordé après plusieurs jours de pluie intense.",
        "Les commerçants espèrent que les touristes reviendront nombreux cette saison.",
        "Une nouvelle ligne de bus reliera bientôt l'hôpital et le centre-ville.",
        "Selon {name}, la cuisine régionale reste la meilleure façon de découvrir le pays.",
        "Le château, construit au Moyen Âge, domine toujours la vieille ville.",
        "Les associations locales organisent des collectes de vêtements pendant l'hiver.",
        "La mairie a décidé de planter {#big} arbres dans les parcs de la ville.",
        "Cette décision a provoqué de longs débats entre les habitants et les élus.",
    ),
    "de": (
        "Die Stadt {city} plant einen neuen Radweg entlang des Flusses.",
        "Nach Angaben der Verwaltung sollen die Arbeiten etwa {#n} Monate dauern.",
        "{name} sagt, dass viele Bewohner schon lange auf diese Entscheidung warten.",
        "Das Museum zählte im vergangenen Jahr mehr als {#big} Besucher.",
        "Die Landwirte in der Region machen sich Sorgen wegen der anhaltenden Trockenheit.",
        "Im Jahr {#year} wurde ein großer Teil der Altstadt renoviert.",
        "Der Gemeinderat wird sich nächste Woche mit dem Haushalt beschäftigen.",
        "Viele junge Menschen ziehen aus den Dörfern nach {city}, um Arbeit zu finden.",
        "Die Bibliothek bietet jetzt kostenlose Kurse für Kinder und Jugendliche an.",
        "Laut einer neuen Studie fahren etwa {#pct} Prozent der Familien täglich mit dem Fahrrad.",
        "Auf dem Wochenmarkt verkaufen Bauern aus dem ganzen Tal ihre Produkte.",
        "An den Schulen in {city} fehlen immer noch Lehrerinnen und Lehrer.",
        "{name} hat vor {#n} Jahren eine kleine Tischlerei gegründet.",
        "Das Musikfestival findet wie jeden Sommer am Ufer des Sees statt.",
        "Forscher der Universität untersuchen die Luftqualität in den älteren Stadtteilen.",
        "Mit dem Zug braucht man ungefähr {#n} Minuten bis nach {city}.",
        "Nach mehreren Tagen mit starkem Regen ist der Fluss über die Ufer getreten.",
        "Die Geschäftsleute hoffen, dass in dieser Saison wieder mehr Touristen kommen.",
        "Eine neue Buslinie wird bald das Krankenhaus mit dem Zentrum verbinden.",
        "Nach Meinung von {name} ist die regionale Küche der beste Weg, das Land kennenzulernen.",
        "Die mittelalterliche Burg thront noch immer über der Altstadt.",
        "Im Winter sammeln örtliche Vereine warme Kleidung für bedürftige Menschen.",
        "Die Stadtverwaltung will in den Parks {#big} neue Bäume pflanzen.",
        "Über diese Entscheidung wurde zwischen Bürgern und Politikern lange gestritten.",
    ),
    "es": (
        "El ayuntamiento de {city} presentó un nuevo plan para mejorar el transporte público.",
        "Según los responsables, las obras durarán unos {#n} meses.",
        "{name} explica que los vecinos esperan este cambio desde hace años.",
        "El museo de la ciudad recibió más de {#big} visitantes el año pasado.",
        "Los agricultores de la comarca están preocupados por la sequía y el precio del agua.",
        "En {#year} se restauró gran parte del casco antiguo.",
        "El pleno municipal debatirá el presupuesto la próxima semana.",
        "Muchos jóvenes dejan los pueblos para buscar trabajo en {city}.",
        "La biblioteca ofrece ahora talleres gratuitos para niños y adolescentes.",
        "Según un estudio reciente, cerca del {#pct} por ciento de las familias usa la bicicleta a diario.",
        "El mercado de los sábados reúne a productores de todo el valle.",
        "Las escuelas de {city} todavía necesitan más profesores.",
        "{name} fundó un pequeño taller de carpintería hace {#n} años.",
        "El festival de música se celebra junto al lago, como cada verano.",
        "Los investigadores de la universidad estudian la calidad del aire en los barrios antiguos.",
        "En tren se tarda unos {#n} minutos en llegar a {city}.",
        "El río se desbordó después de varios días de lluvias intensas.",
        "Los comerciantes esperan que los turistas vuelvan esta temporada.",
        "Una nueva línea de autobús unirá pronto el hospital con el centro.",
        "Para {name}, la cocina regional es la mejor manera de conocer el país.",
        "El castillo medieval todavía domina la parte vieja de la ciudad.",
        "Durante el invierno, las asociaciones del barrio recogen ropa de abrigo.",
        "El ayuntamiento quiere plantar {#big} árboles en los parques.",
        "La decisión provocó largos debates entre los vecinos y los concejales.",
    ),
    "ru": (
        "Власти города {city} представили новый план развития общественного транспорта.",
        "По словам чиновников, строительство займёт несколько месяцев.",
        "{name} говорит, что жители давно ждали этого решения.",
        "В прошлом году городской музей посетили более {#big} человек.",
        "Фермеры региона обеспокоены засухой и ростом цен на воду.",
        "В {#year} году большая часть исторического центра была отреставрирована.",
        "На следующей неделе городской совет обсудит бюджет.",
        "Многие молодые люди уезжают из деревень в {city} в поисках работы.",
        "Библиотека теперь проводит бесплатные занятия для детей.",
        "По данным нового исследования, каждая третья семья ежедневно пользуется велосипедом.",
        "На субботнем рынке продают овощи и мёд из соседних сёл.",
        "В школах города {city} по-прежнему не хватает учителей.",
        "{name} открыл небольшую столярную мастерскую много лет назад.",
        "Музыкальный фестиваль, как и каждое лето, пройдёт на берегу озера.",
        "Учёные университета изучают качество воздуха в старых районах.",
        "На поезде до города {city} можно доехать примерно за час.",
        "После нескольких дней сильных дождей река вышла из берегов.",
        "Местные торговцы надеются, что туристы вернутся в этом сезоне.",
        "Новая автобусная линия скоро соединит больницу с центром города.",
        "{name} считает, что местная кухня — лучший способ узнать страну.",
        "Средневековая крепость до сих пор возвышается над старым городом.",
        "Зимой местные общества собирают тёплую одежду для нуждающихся.",
        "Мэрия решила высадить в парках несколько тысяч деревьев.",
        "Это решение вызвало долгие споры между жителями и депутатами.",
    ),
    "ja": (
        "{city}市は、公共交通を改善するための新しい計画を発表しました。",
        "担当者によると、工事はおよそ{#n}か月かかる見込みです。",
        "{name}さんは、住民が長い間この変化を待っていたと話しています。",
        "市立博物館には、昨年{#big}人以上の人が訪れました。",
        "地域の農家は、雨の少ない天気と水の値段を心配しています。",
        "{#year}年には、古い町並みの多くが修復されました。",
        "市議会は来週、予算について話し合う予定です。",
        "多くの若者が仕事を探すために村から{city}へ引っ越しています。",
        "図書館では、子ども向けの無料の教室が始まりました。",
        "最近の調査では、約{#pct}パーセントの家庭が毎日自転車を使っているそうです。",
        "土曜日の朝市には、谷のあちこちから農家が集まります。",
        "{city}の学校では、今も先生が足りていません。",
        "{name}さんは{#n}年前に小さな家具の工房を開きました。",
        "毎年夏になると、湖のほとりで音楽祭が開かれます。",
        "大学の研究者たちは、古い地区の空気の質を調べています。",
        "駅から電車で{#n}分ほど乗ると、{city}に着きます。",
        "何日も強い雨が続いたあと、川の水があふれました。",
        "店の人たちは、今年こそ観光客が戻ってくることを願っています。",
        "病院と町の中心を結ぶ新しいバスの路線が、まもなくできます。",
        "{name}さんは、地元の料理を食べるのがこの国を知るいちばんの方法だと言います。",
        "古いお城は、今でも町を見下ろすように建っています。",
        "冬になると、地域の人たちが温かい服を集めて配っています。",
        "市は公園に{#big}本の木を植えることを決めました。",
        "この決定について、住民と議員の間で長い話し合いが続きました。",
    ),
    "ko": (
        "{city}시는 대중교통을 개선하기 위한 새로운 계획을 발표했습니다.",
        "담당자에 따르면 공사는 약 {#n}개월 정도 걸릴 예정입니다.",
        "{name} 씨는 주민들이 오랫동안 이 변화를 기다려 왔다고 말했습니다.",
        "시립 박물관에는 지난해 {#big}명이 넘는 관람객이 다녀갔습니다.",
        "지역 농민들은 가뭄과 물값 상승을 걱정하고 있습니다.",
        "{#year}년에는 옛 시가지의 많은 부분이 복원되었습니다.",
        "시의회는 다음 주에 예산에 대해 논의할 예정입니다.",
        "{city}에서 일자리를 찾는 젊은이들이 늘고 있습니다.",
        "도서관에서는 어린이를 위한 무료 강좌가 새로 시작되었습니다.",
        "최근 조사에 따르면 약 {#pct}퍼센트의 가정이 매일 자전거를 이용한다고 합니다.",
        "토요일 아침 시장에는 계곡 곳곳에서 농민들이 모여듭니다.",
        "{city}의 학교들은 여전히 교사가 부족합니다.",
        "{name} 씨는 {#n}년 전에 작은 목공방을 열었습니다.",
        "매년 여름이면 호숫가에서 음악 축제가 열립니다.",
        "대학 연구진은 오래된 동네의 공기 질을 조사하고 있습니다.",
        "기차를 타면 {city}까지 약 {#n}분 정도 걸립니다.",
        "며칠 동안 폭우가 이어진 뒤 강물이 넘쳤습니다.",
        "상인들은 이번 시즌에 관광객이 다시 늘어나기를 바라고 있습니다.",
        "병원과 시내를 잇는 새로운 버스 노선이 곧 개통됩니다.",
        "{name} 씨는 지역 음식을 맛보는 것이 이 나라를 알아가는 가장 좋은 방법이라고 말합니다.",
        "오래된 성은 지금도 옛 도심을 내려다보고 있습니다.",
        "겨울이 되면 지역 단체들이 따뜻한 옷을 모아 이웃에게 나눠 줍니다.",
        "시는 공원에 나무 {#big}그루를 심기로 결정했습니다.",
        "이 결정을 두고 주민들과 의원들 사이에 긴 논쟁이 이어졌습니다.",
    ),
}

_JOINER = {"fr": " ", "de": " ", "es": " ", "ru": " ", "ja": "", "ko": " "}


def foreign_document(rng: random.Random, lang: str) -> str:
    """A few paragraphs of news-like prose in one of FOREIGN_LANGS."""
    order = rng.sample(_SENTENCES[lang], len(_SENTENCES[lang]))
    paragraphs, pos = [], 0
    for _ in range(rng.randint(2, 4)):
        count = rng.randint(3, 5)
        chosen = order[pos : pos + count]
        pos += count
        paragraphs.append(_JOINER[lang].join(fill(s, _POOLS[lang], rng) for s in chosen))
    return "\n\n".join(paragraphs)
