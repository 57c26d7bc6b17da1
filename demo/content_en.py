"""English word lists, sentence templates and layout strings for the demo corpus."""

from __future__ import annotations

import random

from demo.content_fill import items

POOLS: dict[str, tuple[str, ...]] = {
    "noun": items("""
        account, agreement, animal, answer, apartment, archive, area, artist, aspect, audience, bag,
        balance, band, bank, basket, beach, bell, bicycle, bird, blanket, board, boat, book, border,
        bottle, boundary, branch, bridge, budget, building, cabin, cable, camera, canal, candle, car,
        card, career, carpet, cart, castle, cell, chair, chamber, channel, chapter, circle, citizen,
        cliff, clock, cloud, coast, coat, collection, college, column, committee, community, company,
        concert, contract, corner, cottage, council, country, county, court, crop, crowd, cup, custom,
        cycle, decade, decision, desk, device, diary, district, document, door, drawing, driver,
        engine, estate, exhibition, factory, farm, farmer, feature, festival, field, figure, film,
        flag, flower, forest, fountain, frame, garden, gate, generation, gift, glass, group, guide,
        hall, harbor, hat, hill, hospital, hotel, island, jacket, journal, journey, kitchen, ladder,
        lake, lamp, landscape, language, lantern, lecture, letter, library, market, meadow, meeting,
        memory, message, method, mill, mirror, model, monument, mountain, museum, neighbor, network,
        newspaper, notebook, ocean, office, orchard, painting, palace, paper, path, pattern, picture,
        pipe, planet, plant, platform, poem, pond, port, portrait, project, province, puzzle,
        question, railway, record, region, report, river, road, roof, room, route, school, season,
        shelf, ship, shop, signal, song, square, stage, station, statue, street, student, surface,
        symbol, system, table, teacher, temple, tower, town, track, tradition, trail, train, tree,
        tunnel, vehicle, village, voice, wall, window, workshop, writer, ferry, garage, pier,
        quarry, saddle, sketch, timber, vineyard, warehouse, wagon, well, windmill, yard
    """),
    "adj": items("""
        ancient, annual, basic, bitter, bold, brief, bright, broad, busy, calm, careful, central,
        certain, cheap, classic, clean, clear, clever, cold, common, complex, constant, costly,
        crowded, crucial, curious, daily, dark, deep, delicate, dense, direct, distant, diverse,
        dramatic, dry, early, eastern, easy, elegant, empty, enormous, entire, equal, essential,
        exact, familiar, famous, fast, fertile, final, fine, firm, flat, foreign, formal, fragile,
        free, frequent, fresh, friendly, full, gentle, genuine, global, golden, gradual, grand, gray,
        green, hidden, high, historic, honest, huge, humble, ideal, important, independent,
        indirect, informal, initial, intense, internal, large, late, lively, local, lonely, long,
        loud, low, main, major, massive, mild, minor, modern, modest, moderate, narrow, national,
        natural, neat, negative, new, noisy, normal, northern, notable, obvious, odd, open,
        ordinary, original, painful, pale, parallel, partial, patient, peaceful, plain, pleasant,
        popular, positive, powerful, practical, precise, private, public, quiet, rapid, rare, raw,
        recent, regional, regular, reliable, remote, rich, rigid, rough, rural, sacred, safe, scarce,
        secure, serious, sharp, silent, simple, slow, small, smooth, soft, solid, southern, sparse,
        special, stable, steady, steep, strange, strict, strong, subtle, sudden, sufficient, sweet,
        swift, tall, temporary, thick, thin, tiny, tough, typical, unusual, urban, useful, vague,
        valuable, vast, visible, vital, warm, weak, wealthy, western, wide, wild, wise, young
    """),
    "verb": items("""
        analyze/analyzed, assess/assessed, build/built, capture/captured, change/changed,
        check/checked, collect/collected, compare/compared, confirm/confirmed, connect/connected,
        consider/considered, create/created, define/defined, describe/described, design/designed,
        detect/detected, develop/developed, document/documented, examine/examined, expand/expanded,
        explain/explained, explore/explored, extend/extended, follow/followed, gather/gathered,
        handle/handled, identify/identified, improve/improved, inspect/inspected,
        introduce/introduced, measure/measured, model/modeled, monitor/monitored, observe/observed,
        organize/organized, outline/outlined, prepare/prepared, present/presented,
        preserve/preserved, produce/produced, protect/protected, publish/published,
        record/recorded, reduce/reduced, replace/replaced, report/reported, restore/restored,
        review/reviewed, revise/revised, shape/shaped, share/shared, simplify/simplified,
        study/studied, support/supported, survey/surveyed, test/tested, track/tracked,
        transform/transformed, update/updated, verify/verified, visit/visited,
        challenge/challenged, question/questioned, highlight/highlighted, map/mapped,
        trace/traced, fund/funded, launch/launched, adopt/adopted, approve/approved,
        reject/rejected, propose/proposed, discuss/discussed, plan/planned, rebuild/rebuilt,
        find/found, hold/held, bring/brought, draw/drew, lead/led, keep/kept, make/made, see/saw,
        take/took, give/gave, write/wrote, sell/sold, buy/bought, teach/taught, win/won,
        open/opened, close/closed, paint/painted, carry/carried, move/moved, cross/crossed,
        deliver/delivered, repair/repaired, estimate/estimated, predict/predicted,
        simulate/simulated, sample/sampled, quantify/quantified, correct/corrected
    """),
    "adv": items("""
        carefully, gradually, quickly, slowly, quietly, clearly, widely, rarely, often, sharply,
        steadily, suddenly, partly, largely, mostly, closely, strongly, briefly, openly, roughly,
        firmly, freely, gently, barely, easily
    """),
    "first": items("""
        Adam, Alice, Amara, André, Anna, Ben, Carlos, Chloé, Clara, Daniel, David, Elena, Emma,
        Ethan, Fatima, Felix, Grace, Hannah, Henry, Isaac, Ivan, Jack, James, Jonas, José, Julia,
        Kai, Karen, Laura, Leo, Lucas, Lucy, Maria, Mark, Martin, Maya, Mei, Mia, Nadia, Nathan,
        Noah, Nora, Olivia, Omar, Oscar, Paul, Peter, Priya, Rachel, Rafael, Rosa, Ruth, Samuel,
        Sara, Sofia, Søren, Thomas, Victor, Vera, William, Zoë, Hugo, Iris, Joel, Lena, Marcus,
        Nina, Owen, Ravi, Simon, Tara, Yusuf, Ada, Bruno, Elif, Farah, Greta, Hiro, Ingrid, Kofi
    """),
    "last": items("""
        Abbott, Adeyemi, Alvarez, Anderson, Baker, Becker, Bennett, Brooks, Carter, Castro, Chen,
        Clarke, Cohen, Costa, Daniels, Dubois, Edwards, Ellis, Evans, Fischer, Fleming, Ford,
        Garcia, Grant, Gupta, Hall, Hansen, Harris, Hughes, Ito, Jensen, Kaplan, Keller, Khan, Kim,
        Klein, Kowalski, Larsen, Lee, Lopez, Martin, Mendes, Meyer, Miller, Moreau, Murphy,
        Nakamura, Nguyen, Novak, Okafor, Olsen, Ortiz, Park, Patel, Perez, Quinn, Reed, Reyes,
        Rossi, Schmidt, Silva, Singh, Stone, Sullivan, Tanaka, Taylor, Torres, Turner, Varga,
        Wagner, Walsh, Wang, Ward, Weber, Wright, Young, Zhou, Müller, Núñez, Ødegaard
    """),
    "place": items("""
        Accra, Adelaide, Amsterdam, Ankara, Athens, Auckland, Austin, Baltimore, Bangalore,
        Barcelona, Belfast, Bergen, Bogotá, Bologna, Bordeaux, Boston, Brisbane, Bristol,
        Brussels, Budapest, Cairo, Calgary, Cape Town, Chicago, Cork, Córdoba, Dakar, Denver,
        Dublin, Durban, Edinburgh, Florence, Galway, Geneva, Glasgow, Göteborg, Granada, Hamburg,
        Helsinki, Hobart, Istanbul, Jakarta, Kraków, Kyoto, Lagos, Leeds, Leipzig, Lima, Lisbon,
        Liverpool, Lyon, Madrid, Malmö, Manila, Marseille, Melbourne, Milan, Montreal, Mumbai,
        Munich, Nairobi, Naples, Nantes, Oslo, Ottawa, Oxford, Perth, Porto, Portland, Prague,
        Quebec, Quito, Reykjavík, Riga, Rotterdam, San Diego, Santiago, São Paulo, Seattle,
        Seville, Sheffield, Stockholm, Sydney, Tallinn, Tampere, Toronto, Toulouse, Turin, Utrecht,
        Valencia, Vancouver, Vienna, Vilnius, Warsaw, Wellington, Winnipeg, Zürich, Zagreb
    """),
    "region": items("""
        northern Portugal, the Scottish Highlands, central Chile, eastern Kenya, southern Norway,
        the Baltic coast, western Ireland, the Andes foothills, northern Italy, the Rhine valley,
        southern Brazil, the Canadian prairies, coastal Peru, the Danube basin, central Finland,
        the Atlas mountains, southern Spain, the Great Lakes region, eastern Poland, the Alps,
        the Pacific Northwest, northern Greece, central Mexico, the Welsh borders, Tasmania,
        the Dutch lowlands, inland Queensland, the Carpathians, southern Sweden, the Loire valley,
        western Australia, upland Bavaria, the Yukon, Patagonia, the Balkans, coastal Ghana
    """),
    "conn": items("""
        Moreover|In addition|However|By contrast|In practice|As a result|For this reason|
        At the same time|On the other hand|In most cases|Even so|Overall|Similarly|In particular|
        Taken together|Nevertheless|In this context|Not surprisingly|Importantly|Still|Meanwhile|
        In short|To be fair|In other words|Above all|For example|Yet
    """.replace("|", ",")),
    "day": items("Monday, Tuesday, Wednesday, Thursday, Friday, Saturday, Sunday"),
    "period": items("week, month, year, spring, summer, autumn, winter, quarter"),
    "field": items("""
        marine ecology, computational linguistics, urban planning, soil science, behavioral
        economics, public health, materials science, climate science, developmental psychology,
        medieval history, agricultural economics, cognitive science, epidemiology, hydrology,
        plant genetics, social policy, education research, transport engineering, forest ecology,
        labor economics, sociolinguistics, political science, archaeology, astrophysics, nutrition
        science, environmental law, network science, organic chemistry, neuroscience, geography,
        demography, veterinary science, ornithology, oceanography, seismology, criminology,
        musicology, architecture, glaciology, energy policy, machine learning, information
        retrieval, speech processing, robotics, crop science, coastal engineering, art history,
        econometrics, human geography, wildlife biology
    """),
    "method": items("""
        regression analysis, field sampling, a randomized trial, panel data models, a cohort design,
        content analysis, case studies, remote sensing, a controlled experiment, structured
        interviews, network analysis, a longitudinal survey, spatial statistics, Bayesian
        inference, mixed methods, time series models, participant observation, laboratory assays,
        numerical simulation, cluster analysis, principal component analysis, discourse analysis,
        archival research, a matched sample, eye tracking, isotope analysis, text mining,
        a meta-analysis, agent-based models, survival analysis, genome sequencing, drone surveys,
        acoustic monitoring, sediment cores, satellite imagery, focus groups, a pilot study,
        questionnaires, a quasi-experiment, microscopy, stream gauges, tree ring records
    """),
    "topic": items("""
        soil erosion, protein folding, urban heat, reading ability, migration, wage inequality,
        sleep quality, river pollution, crop rotation, coral bleaching, housing density, vaccine
        uptake, social trust, groundwater depletion, bird migration, language contact, school
        choice, air quality, traffic congestion, rainfall variability, forest loss, income
        mobility, bilingual education, food security, coastal flooding, market competition,
        online learning, childhood obesity, memory decline, wetland loss, plastic waste, heat
        stress, seed dispersal, tourism demand, energy demand, noise exposure, water scarcity,
        pollinator decline, fish stocks, vocabulary growth, voter turnout, rural poverty, land
        use, glacier retreat, drought risk, species richness, pest resistance, bone density,
        muscle fatigue, sugar intake, screen time, remote work, credit access, trade openness,
        price stability, urban sprawl, nitrogen runoff, permafrost thaw, ocean acidity, wildfire
        risk, labor supply, teacher turnover, hospital capacity, antibiotic use, gene expression,
        cell growth, enzyme activity, battery aging, solar output, storm surge, sea ice
    """),
    "measure": items("""
        response time, error rate, growth rate, survival rate, crop yield, test scores, blood
        pressure, body weight, household income, energy use, water quality, species counts,
        emission levels, travel time, attendance, heart rate, reading speed, staff turnover,
        market share, rental prices, graduation rates, nitrogen levels, soil moisture, tree cover,
        life expectancy, school enrollment, fish biomass, noise levels, accuracy, retention, wage
        levels, patient outcomes, recovery time, sediment load, surface temperature, snow depth,
        stream temperature, hospital admissions, output per worker
    """),
    "sample": items("""
        household, farmer, student, patient, teacher, worker, adolescent, commuter, resident,
        voter, nurse, firm, school, village, clinic, plot, stream, lake, seedling, participant,
        volunteer, adult, migrant, retiree, driver, shop, hospital, classroom, speaker, learner,
        athlete, tourist, fisher, herder, startup, neighborhood, river basin, watershed, colony,
        hive, nest, sample site
    """),
    "tnoun": items("""
        cache, parser, scheduler, queue, worker, buffer, index, token, session, request, response,
        handler, router, plugin, module, client, server, connection, socket, stream, channel,
        thread, process, pipeline, job, task, event, message, batch, schema, table, column,
        query, cursor, snapshot, backup, log file, metric, counter, timer, config file, profile,
        template, widget, component, service, endpoint, proxy, gateway, driver, adapter, loader,
        encoder, decoder, serializer, validator, formatter, renderer, compiler, tokenizer,
        allocator, registry, manifest, bundle, container, volume, cluster, node, replica, shard,
        lock, hook, callback, iterator, sandbox, certificate, checksum, payload, header, entry,
        directory, archive
    """),
    "tverb": items("""
        cache/cached, parse/parsed, schedule/scheduled, validate/validated, serialize/serialized,
        compress/compressed, encrypt/encrypted, index/indexed, load/loaded, store/stored,
        fetch/fetched, retry/retried, flush/flushed, merge/merged, split/split, sort/sorted,
        filter/filtered, stream/streamed, deploy/deployed, configure/configured,
        install/installed, register/registered, render/rendered, compile/compiled,
        debug/debugged, profile/profiled, trace/traced, monitor/monitored, export/exported,
        import/imported, migrate/migrated, restore/restored, rotate/rotated, sign/signed,
        verify/verified, queue/queued, route/routed, encode/encoded, decode/decoded,
        update/updated, upload/uploaded, download/downloaded, reload/reloaded, inspect/inspected
    """),
    "option": items("""
        max_workers, timeout, retry_limit, batch_size, log_level, cache_dir, buffer_size,
        chunk_size, queue_depth, flush_interval, read_only, strict_mode, dry_run, output_format,
        encoding, compression, backoff_factor, pool_size, max_connections, keep_alive, verbose,
        bind_address, port, data_dir, tmp_dir, shard_count, replica_count, follow_links,
        max_depth, page_size, sort_key, index_path, cert_file, key_file, region, namespace,
        lock_timeout, max_retries, cache_size, worker_count
    """),
    "datasource": items("""
        a local file, an HTTP endpoint, an object store, a message queue, the standard input,
        a SQLite database, a Kafka topic, a Git repository, a network share, a CSV export,
        environment variables, a YAML file, a Redis cache, a remote server, a tarball
    """),
    "topo_head": items("""
        Ash, Oak, Stone, Fair, Mill, Red, Black, Green, North, West, Elm, Hazel, King, Silver, Iron,
        Clear, Deep, High, Long, Brack, Cold, Dun, East, Fox, Glen, Hart, Lark, Marsh, Nether, Old,
        Pine, Rook, Salt, Thorn, Wex, Birch, Copper, Dove, Fern, Gold, Holly, Moss, Pebble, Raven,
        Sand, White, Wind, Alder, Bram, Crest
    """),
    "topo_tail": items("""
        brook, ridge, haven, water, ford, cliff, more, vale, wick, bury, stead, mouth, dale, field,
        wood, moor, combe, hill, well, bridge, cross, gate, by, ton, ham, ley, mere, holt
    """),
    "place_kind": items("""
        market town, river, lake, mountain, island, valley, village, coastal town, plateau, bay,
        fishing village, hill town, river port, moorland, peninsula
    """),
    "sp_mark": items("""
        spotted, striped, pale, dusky, crested, long-tailed, short-winged, golden, banded,
        red-throated, black-capped, white-browed, speckled, copper, olive, slender, marsh, reed,
        mountain, coastal, forest, desert, river, meadow
    """),
    "sp_range": items("""
        Atlas, Baltic, Siberian, Cape, Iberian, Balkan, Andean, Alpine, Nordic, Pacific, Caspian,
        Aegean, Highland, Lowland, Saharan, Amazonian, Pyrenean, Arctic, Carpathian, Levantine
    """),
    "sp_animal": items("""
        warbler, finch, heron, owl, plover, kingfisher, thrush, sparrow, beetle, frog, bat,
        lizard, moth, butterfly, snail, toad, newt, dragonfly, wren, lark, shrew, vole, gecko,
        grasshopper
    """),
    "role": items("""
        painter, composer, botanist, engineer, poet, mathematician, architect, chemist, explorer,
        novelist, astronomer, physician, sculptor, historian, economist, inventor, photographer,
        geologist, linguist, cartographer
    """),
    "structure": items("""
        bridge, lighthouse, castle, abbey, railway station, viaduct, windmill, observatory,
        theater, library, fortress, dam, tower, covered market, aqueduct
    """),
    "material": items("""
        granite, limestone, red brick, oak timber, cast iron, sandstone, slate, reinforced
        concrete, marble, local flint, steel, glass, clay tile, basalt
    """),
    "food": items("""
        seeds, insects, small snails, spiders, berries, nectar, worms, beetle larvae, algae,
        grass shoots, fallen fruit, moss, small fish, aquatic insects
    """),
    "habitat": items("""
        wet meadows, pine forests, river banks, coastal dunes, high moorland, rocky slopes,
        reed beds, old orchards, limestone caves, mountain streams, salt marshes, hedgerows
    """),
    "threat": items("""
        habitat loss, drainage of wetlands, intensive farming, road building, pesticide use,
        invasive predators, warmer winters, forest clearing, river pollution, light pollution
    """),
    "econ": items("""
        fishing, tourism, dairy farming, forestry, boat building, wool trade, wine making,
        small factories, stone quarrying, fruit growing, shipping, crafts, salt production
    """),
    "crop": items("barley, potatoes, apples, grapes, oats, wheat, cherries, hops, olives, rye, pears"),
    "official": items("""
        mayor, governor, health minister, police chief, school superintendent, city planner,
        union leader, council member, transport director, fire chief, judge, energy minister,
        trade official, park ranger, harbor master, housing director, city treasurer
    """),
    "institution": items("""
        the city council, the regional government, the transport authority, the health
        department, the school board, the central bank, the water utility, the port authority,
        the national weather service, the housing agency, the local hospital, the university,
        the chamber of commerce, the environmental agency, the electoral commission, the parks
        department, the labor ministry, the statistics office, the airport operator, the fire
        service
    """),
    "issue": items("""
        housing costs, traffic delays, water shortages, rising rents, school closures, air
        pollution, flood defenses, hospital waiting times, bus fares, power outages, youth
        unemployment, food prices, street safety, noise complaints, budget cuts, parking fees,
        tourist numbers, wildfire risk, storm damage, heating bills, internet access, road
        repairs, waste collection, library hours, teacher shortages, farm subsidies, fishing
        quotas, bridge repairs, rail strikes, fuel prices
    """),
    "event": items("""
        flood, storm, transit strike, power cut, heat wave, landslide, street festival, local
        election, protest march, marathon, trade fair, earthquake, wildfire, factory fire, bridge
        closure, data breach, product recall, harvest fair, open-air concert, cycling race, book
        fair, port strike, snowstorm, water main break, train derailment, charity auction
    """),
    "shop": items("""
        bakery, bookshop, hardware store, café, pharmacy, bicycle shop, flower stall, butcher
        shop, repair shop, grocery, tailor shop, toy store
    """),
    "nature": items("""
        river, moon, willow, meadow, harbor, lantern, orchard, pine, shore, tide, sparrow, rain,
        snow, wind, stone, field, hill, valley, reed, candle, cloud, star, garden, well, bridge,
        path, ember, frost, fog, leaf, branch, root, wave, island, cliff, heron, bell, window,
        gate, road, mountain, lake, rose, thorn, ash, dust, salt, shadow, smoke, feather, seed,
        pearl, mirror, apple, thistle, clover, nettle, marsh, creek, dune
    """),
    "feeling": items("""
        sorrow, longing, joy, silence, memory, hope, grief, tenderness, patience, wonder, regret,
        desire, fear, courage, kindness, loneliness, gladness, mercy, pride, doubt, faith, shame,
        delight, hunger, rest, anger, calm, grace, envy, love
    """),
    "color": items("""
        silver, golden, gray, pale, blue, green, crimson, amber, white, black, violet, rusted,
        copper, ivory, scarlet, dusky, emerald, ashen, rosy, bronze
    """),
    "lverb": items("""
        sleep/slept, fall/fell, rise/rose, burn/burned, shiver/shivered, wait/waited, sing/sang,
        drift/drifted, wander/wandered, tremble/trembled, glow/glowed, fade/faded, bend/bent,
        break/broke, turn/turned, linger/lingered, whisper/whispered, shine/shone, run/ran,
        rest/rested, vanish/vanished, gather/gathered, kneel/knelt, breathe/breathed,
        dance/danced, weep/wept, sway/swayed, flicker/flickered, hum/hummed, settle/settled
    """),
    "when": items("""
        at dusk, at dawn, in the evening, before the rain, after the storm, in early spring,
        in late autumn, at midnight, in winter, by morning, all night, under the moon,
        in the heat of noon, on the last day, through the long summer, after the harvest
    """),
    "item": items("""
        order, package, parcel, laptop, phone case, jacket, blender, ticket, subscription,
        invoice, coffee maker, backpack, desk lamp, monitor, keyboard, printer, vacuum cleaner,
        water bottle, headset, router, mattress, sofa cover, gift card, camera bag, charging
        cable, watch strap, tent, bicycle lock, rice cooker, air purifier
    """),
    "problem": items("""
        arrived damaged, was the wrong size, stopped working after two days, is missing a part,
        never arrived, was charged twice, does not turn on, makes a loud noise, came in the wrong
        color, keeps disconnecting, has a cracked screen, went to the wrong address
    """),
    "remedy": items("""
        a refund, a replacement, an exchange, store credit, a free repair, a partial refund,
        a discount voucher
    """),
    "relation": items("sister, brother, mother, father, cousin, grandmother, neighbor, colleague, friend"),
    "greet": items("Hi, Hello, Hey there, Good morning, Hi there, Good afternoon"),
    "ago": items("last week, two days ago, on Monday, earlier this month, a few days ago, last Friday, in March"),
    "ask_check": items("""
        could you check it for me?, can you look into it?, what is going on with it?, could you see where
        it is?, is there any update?
    """),
    "prefer": items("prefer, really like, be happy with, rather have"),
    "politely": items("if that is possible, if you can arrange it, please, if it is not too much trouble"),
    "meant": items("meant as a gift, supposed to be a present, bought as a birthday gift, ordered"),
    "thanks": ("Thanks.", "Thank you.", "Okay, thanks.", "Great.", "Perfect."),
    "usually": items("usually, normally, typically"),
    "too": items("too, as well, on arrival, when it came"),
    "return_verb": items("return, exchange, drop off, swap"),
    "store": items("store, branch, shop, pickup point"),
    "ok_phrase": items("That sounds fine., Okay., Alright., Fair enough., Understood."),
    "task": items("print a label, pack it myself, stay at home, keep the receipt, call the courier"),
    "agent_task": items("print anything, pack the item, stay at home, call anyone, find the receipt"),
    "fixing": items("restarting, resetting, charging, reinstalling, unplugging, cleaning"),
    "already": items("already, so far, this morning, since Sunday, today"),
    "thanks_a_lot": items("Thank you, Many thanks, Thanks a lot, Cheers"),
    "tracking": items("has not changed, says delivered, shows an error, is stuck on processing"),
    "shipping": items("express shipping, gift wrapping, next-day delivery, insurance"),
    "fix_verb": items("repair, check, replace, look at"),
    "occasion": items("a trip, a birthday, an exam, a wedding, a move, a conference"),
    "sorry_user": items("Sorry, Oh, By the way, Actually"),
    "ask_do": items("send a new one, fix it, call me, refund the shipping"),
    "hello": items("Hello, Hi, Good afternoon, Good morning"),
    "thanks_contact": items("thanks for reaching out, thank you for contacting us, thanks for your message"),
    "sorry": items("sorry, really sorry, very sorry to hear"),
    "send": items("send me, share, upload, email"),
    "photo": items("a photo, a picture, a short video"),
    "packaging": items("the packaging, the label, the receipt, the serial number"),
    "arranged": items("arranged, requested, approved, set up"),
    "see": items("see, receive, get"),
    "days": items("business days, working days, days"),
    "courier": items("courier, delivery partner, driver"),
    "collect": items("collect, pick up"),
    "address": items("address, door, building, office"),
    "added": items("added, left, attached"),
    "team": items("the team, my colleague, our warehouse, the returns desk"),
    "follow": items("follow up, check it, call you, sort it out"),
    "help_with": items("help you with, do for you, check for you"),
    "today": items("today, at the moment, right now, this afternoon"),
    "driver": items("""
        the driver will bring a label, the courier prints it, we handle the paperwork, the label is
        in your inbox
    """),
    "for_trouble": items("for the trouble, as an apology, on top of that"),
    "patience": items("your patience, waiting, bearing with me"),
    "check": items("check, review, confirm"),
    "stock": items("is back in stock, is out of stock, is being restocked, was shipped this morning"),
    "system": items("our system, the courier, the tracking record"),
    "parcel": items("left the depot, was scanned in Leeds, was returned, reached the local hub"),
    "escalated": items("escalated, passed, forwarded"),
    "reply": items("reply, call you, email you, decide"),
    "sure": items("Sure., No problem., Of course., Certainly."),
    "doc": items("a return label, the receipt, a confirmation, the refund details"),
    "soon": items("shortly, today, within the hour, by tonight"),
    "receive": items("receive, inspect, log, scan"),
    "lang_os": items("Linux, macOS, Windows, a Raspberry Pi, an old laptop"),
    "hear": items("hear, read, see anything"),
    "yes_phrase": ("Yes,", "Yeah,", "I did,", "Sure,"),
    "leisure": items("relax, read, meet friends, walk the dog, have lunch"),
    "travel": items("walk, take the bus, cycle, drive"),
    "booktype": items("novel, book, essay collection, travel guide, memoir"),
    "part": items("ending, first chapter, main character, writing"),
    "month": items("January, February, March, April, May, June, July, August, September, October, November, December"),
    "hobby": items("swim, run, play chess, go climbing, paint, bake bread"),
    "condition": items("it is sunny, I have time, my knee allows it, the pool is quiet"),
    "pet": items("kitten, puppy, parrot, rabbit, tortoise"),
    "petname": items("Biscuit, Pepper, Luna, Milo, Olive, Pickle, Juniper"),
    "street": items("Elm, Market, Harbor, Mill, Church, Station, Bridge, Garden"),
    "dish": items("soup, bread, cake, noodles, salad, coffee, pastries"),
}

_ENCY_COMMON = (
    "{subj} is mentioned in {adj:a} survey published by {first} {last} in {#year}.",
    "Records kept at the {place} archive describe {subj} as {adj} and {adj}.",
    "Scholars of {field} have used {subj} as {adj:a} example of {topic}.",
    "Photographs from {#year} show {subj} next to {adj:a} {noun}.",
    "The {place} society for local history publishes {adj:a} newsletter about {subj}.",
    "Several {adj} {noun:pl} connected with {subj} are kept in a museum in {place}.",
    "In {#year}, {first} {last} wrote {adj:a} poem about {subj}.",
    "{subj} appears on {adj:a} stamp issued in {#year}.",
    "Public interest in {subj} grew after {adj:a} documentary in {#year}.",
    "{adj:cap} accounts of {subj} circulated in {place} newspapers around {#year}.",
)

TEMPLATES: dict[str, tuple[str, ...]] = {
    "academic": (
        "This study examines how {topic} affects {measure} among {sample:pl} in {place}.",
        "We collected data from {#big} {sample:pl} over {#n} months.",
        "Using {method}, the authors {verb:past} {adj:a} link between {topic} and {measure}.",
        "Earlier work by {last} and {last} {verb:past} {topic} mainly in {adj} settings.",
        "The results suggest that {measure} rose by {#pct} percent when {topic} was {adj}.",
        "{conn}, {method} {verb:s3} {adj:a} view of {topic}.",
        "Our analysis of {#n} {sample:pl} near {place} {verb:past} {adj} differences in {measure}.",
        "In {#year}, {first} {last} proposed that {topic} could explain {adj} shifts in {measure}.",
        "A second experiment {verb:past} the {noun} with {method} and found {adj:a} effect.",
        "The sample included {#big} {sample:pl}, of whom {#pct} percent lived in {place}.",
        "These findings agree with {adj} models of {topic} in {field}.",
        "{conn}, the {adj} {noun} remains {adj} for scholars of {field}.",
        "We therefore treat {topic} as {adj:a} factor rather than {adj:a} cause.",
        "Limitations include the {adj} size of each {noun} and possible bias in {measure}.",
        "Future research should {verb} {topic} across {adj} {sample:pl} and longer periods.",
        "The mean {measure} was {#dec} in the control group and {#dec} under {topic}.",
        "Table {#n} reports how {measure} changed after {topic} was introduced.",
        "{first} {last} at the University of {place} {verb:past} the {adj} {noun} used here.",
        "Compared with {method}, our approach {verb:s3} {topic} with {adj} precision.",
        "{conn}, {sample:pl} exposed to {topic} showed {adj} {measure} within {#n} weeks.",
        "The model assumes that {topic} and {topic} interact through {adj} {noun:pl}.",
        "We estimated the effect of {topic} on {measure} with {method}.",
        "Our main contribution is {adj:a} framework linking {topic} to {field}.",
        "Interviews with {#n} {sample:pl} revealed {adj} concerns about {topic}.",
        "Field work in {place} during {#year} {verb:past} several {adj} {noun:pl}.",
        "When {measure} was adjusted for {topic}, the {adj} trend largely disappeared.",
        "The theory of {topic} — first described in {#year} — predicts {adj} {measure}.",
        "Few studies in {field} {verb} {topic} directly.",
        "{topic:cap} is often treated as {adj:a} {noun} in {field}.",
        "We thank the staff of the {place} field station for their {adj} help.",
        "{adj:a} pattern emerged: {measure} fell {adv} as {topic} increased.",
        "Data from {place} and {place} were pooled to {verb} {measure}.",
        "Reviewers of an earlier draft asked us to {verb} the role of {topic}.",
        "Figure {#n} shows {measure} for {#n} {sample:pl} grouped by {topic}.",
    ),
    "academic_title": (
        "{adj:cap} {topic} and {measure} among {sample:pl} in {place}",
        "On the {adj} role of {topic} in {field}",
        "{topic:cap} and {measure}: evidence from {place}",
        "Rethinking {topic} through {method}",
        "How {topic} shapes {measure} in {adj} {sample:pl}",
    ),
    "tech": (
        "{project} is {adj:a} toolkit to {tverb} {tnoun:pl} in {lang_name} projects.",
        "It {tverb:s3} each {tnoun} before the {tnoun} {tverb:s3} it.",
        "You can {tverb} the {tnoun} by editing the {option} setting.",
        "By default, the {tnoun} handles up to {#n} {tnoun:pl} per second.",
        "Set the `{option}` option to change how the {tnoun} {tverb:s3} {tnoun:pl}.",
        "If the {tnoun} fails, {project} will {tverb} it and log {adj:a} warning.",
        "The {tnoun} keeps every {tnoun} in memory until the {tnoun} is closed.",
        "Version {#n}.{#n} adds support for {adj} {tnoun:pl}.",
        "Note that the {tnoun} must be {adj} before you {tverb} it.",
        "{conn}, the {tnoun} can {tverb} {tnoun:pl} from {datasource}.",
        "Each {tnoun} exposes {#n} methods; the most common ones appear below.",
        "This guide shows how to {tverb} {adj:a} {tnoun} step by step.",
        "Large {tnoun:pl} are split into chunks of `{option}` bytes.",
        "When `{option}` is unset, {project} reads it from {datasource}.",
        "Older releases could not {tverb} {tnoun:pl} that were {adj}.",
        "The {tnoun} is thread safe, so several workers may {tverb} it at once.",
        "Errors from the {tnoun} include the {tnoun} name and {adj:a} hint.",
        "To keep builds {adj}, pin {project} to a known version.",
        "Most users only need to {tverb} the {tnoun} once per {tnoun}.",
        "{adj:a} {tnoun} usually means the {tnoun} was never {tverb:past}.",
        "{project} was first written by {first} {last} to {tverb} {tnoun:pl} at {adj:a} company.",
        "The `{option}` flag has no effect when `{option}` is false.",
        "Benchmarks on {#n} cores show the {tnoun} is {#n} times faster than before.",
    ),
    "tech_title": (
        "{project}: {adj:cap} {tnoun} for {lang_name}",
        "Getting started with {project}",
        "{project} user guide",
        "How to {tverb} {tnoun:pl} with {project}",
    ),
    "tech_list": (
        "`{option}`: how the {tnoun} {tverb:s3} {tnoun:pl} (default {#n})",
        "{tverb:cap} {tnoun:pl} from {datasource}",
        "Support for {adj} {tnoun:pl}",
        "Faster {tnoun} startup on {adj} machines",
        "{adj:a} {tnoun} for {tnoun:pl}",
        "`{option}` now accepts values up to {#big}",
        "Clearer errors when the {tnoun} cannot {tverb} a {tnoun}",
    ),
    "ency_place_lead": ("{subj} is {kind:a} in {region}.",),
    "ency_place": (
        "The {kind} lies about {#n} kilometers from {place} and covers {#big} hectares.",
        "{subj} first appears in records from {#year}, when it served as {adj:a} {noun}.",
        "Its population was estimated at {#big} in {#year}.",
        "The local economy depends on {econ} and {econ}.",
        "The climate is {adj}, with {adj} winters and {adj} summers.",
        "Notable landmarks include the old {noun}, {adj:a} {noun} and the {subj} {noun}.",
        "In {#year} a new {noun} linked {subj} with {place}.",
        "The name {subj} probably comes from an older word for {noun}.",
        "Every {period}, the {kind} hosts {adj:a} {event} that draws visitors from {place}.",
        "Farmers around {subj} grow {crop} and {crop}.",
        "{adj:a} {structure} built in {#year} still stands near the center.",
        "The {kind} was badly damaged by {event:a} in {#year}.",
        "A railway line from {place} reached {subj} in {#year}.",
        "Many families in {subj} still speak {adj:a} local dialect.",
        *_ENCY_COMMON,
    ),
    "ency_species_lead": ("The {subj} is a species of {kind} found in {habitat} across {region}.",),
    "ency_species": (
        "Adults measure about {#n} centimeters and weigh up to {#n} grams.",
        "It feeds mainly on {food} and {food}.",
        "The species was first described by {first} {last} in {#year}.",
        "Its {color} markings and {adj} shape make it easy to recognize.",
        "Breeding takes place in {period}, usually near {habitat}.",
        "Numbers have fallen by {#pct} percent since {#year} because of {threat}.",
        "Local names for the {kind} refer to its {adj} call or {color} color.",
        "Young {kind:pl} leave the nest after about {#n} days.",
        "The {subj} is protected in {region}, where {threat} is a growing concern.",
        "The {subj} is most active {when}, when it searches for {food}.",
        "Its range overlaps with that of the {sp_mark} {kind} in parts of {region}.",
        "Field guides from {#year} describe the {subj} as {adj} but {adj}.",
        "A survey in {#year} counted about {#big} of them in {region}.",
        *_ENCY_COMMON,
    ),
    "ency_person_lead": ("{subj} ({born}–{died}) was {adj:a} {kind} known for work on {topic}.",),
    "ency_person": (
        "Born in {place}, {plast} studied at the University of {place}.",
        "In {mid}, {plast} published {adj:a} study of {topic}.",
        "{plast} later moved to {place}, working as {adj:a} {kind} for {#n} years.",
        "The best known work by {plast} describes {topic} in {region}.",
        "Critics praised the {adj} style of {plast}'s early work.",
        "{plast} received a medal from the {place} academy in {mid}.",
        "{plast} died in {place} in {died}.",
        "Letters between {plast} and {first} {last} show {adj:a} friendship.",
        "{noun:a} in {place} is named after {plast}.",
        "As a student, {plast} spent {#n} months in {place} studying {topic}.",
        "{plast} taught {field} at a college in {place} for many years.",
        "A biography of {plast} by {first} {last} appeared in {#year}.",
        "Some of {plast}'s {adj} notebooks are now kept in {place}.",
        *_ENCY_COMMON,
    ),
    "ency_structure_lead": ("The {subj} is {adj:a} {kind} in {region}, completed in {#year}.",),
    "ency_structure": (
        "It was designed by the {role} {first} {last}.",
        "The {kind} is built mainly of {material} and {material}.",
        "At {#n} meters, it was once the tallest {kind} in the region.",
        "Repairs in {#year} replaced the original {noun} and restored the {adj} {noun}.",
        "Today the {kind} is open to visitors and houses {adj:a} small museum.",
        "During the war of {#year} the {kind} served as {adj:a} {noun}.",
        "Local stories claim the {kind} was built over {adj:a} {noun}.",
        "Its {adj} facade faces the old {noun}.",
        "Between {#year} and {#year} the {kind} was closed to the public.",
        "Local craftsmen used {material} brought from {place}.",
        "Engineers from {place} inspected the {kind} after {event:a} in {#year}.",
        *_ENCY_COMMON,
    ),
    "news": (
        "{institution:cap} in {place} approved a plan on {day} to address {issue}.",
        "Officials said the {noun} would cost about {#big} dollars.",
        "{first} {last}, {official:a} in {place}, told reporters that {issue} had become {adj}.",
        "Residents of {place} have complained about {issue} for {#n} months.",
        "The decision follows {adj:a} {event} that affected {#big} people last {period}.",
        "According to {institution}, {#pct} percent of households were affected.",
        "Critics argued that the {noun} was {adj} and {adj}.",
        "{conn}, {institution} will review the {noun} next {period}.",
        "The {event} began in {place} and spread to {#n} nearby districts.",
        "Local businesses expect {issue} to ease by the end of the {period}.",
        "{first} {last}, who runs {adj:a} {shop} in {place}, said sales fell by {#pct} percent.",
        "A spokesperson for {institution} declined to comment on {issue}.",
        "The {official} promised {adj} measures to {verb} {issue}.",
        "Earlier this {period}, {institution} {verb:past} {adj:a} report on {issue}.",
        "Volunteers from {place} helped {verb} the {noun} after the {event}.",
        "Some {#n} families were moved to {adj} shelters on {day}.",
        "The {official} of {place} called the situation {adj} but under control.",
        "Traffic on the {place} road was diverted for {#n} hours on {day}.",
        "{adj:a} {event} in {#year} led to similar debates about {issue}.",
        "Analysts warned that {issue} could rise by {#pct} percent if nothing changes.",
        "{first} {last}, who lives near the {noun}, said the {event} was {adj}.",
    ),
    "news_title": (
        "{place}: {institution:cap} moves to tackle {issue}",
        "{event:cap} hits {place}",
        "{adj:cap} {issue} worries residents of {place}",
        "{official:cap} of {place} unveils {adj} plan",
        "What the {event} means for {issue}",
    ),
    "poem": (
        "the {color} {nature} {lverb:s3} {when}",
        "{when}, the {nature} {lverb:s3}",
        "I {lverb:past} beside the {color} {nature}",
        "and {feeling} {lverb:past} like {nature:a}",
        "O {nature}, {adj} and {color},",
        "where {nature:pl} {lverb} in {color} light",
        "between the {nature} and the {nature}",
        "we carried {feeling} across the {nature}",
        "your voice, {adj:a} {nature}",
        "the {nature:pl} remember {feeling}",
        "no one {lverb:past} here but the {nature}",
        "{feeling:cap} is {adj:a} {nature}",
        "the {nature} keeps its {color} {feeling}",
        "let the {nature:pl} {lverb} {when}",
        "so {adj}, so {adj}, the {nature}",
    ),
    "fiction": (
        "{first} stood by the {color} {nature} and thought about {feeling}.",
        "The {nature} outside was {adj}, and the {nature} {lverb:past} in the wind.",
        "She had not seen {first} since that {adj} winter in {place}.",
        "“We should leave before the {nature} {lverb:s3},” {first} said.",
        "For {#n} years the {noun} had stood in the {adj} corner of the room.",
        "He opened the {noun} and found a letter from {first} {last}.",
        "Nobody in the village spoke of the {adj} {noun} anymore.",
        "“Do you remember the {nature} near {place}?” she asked.",
        "The {noun} smelled of {nature} and {adj} {nature}.",
        "{first} laughed, but {feeling} {lverb:past} behind the laugh.",
        "By the time the {nature} {lverb:past}, the {noun} was already {adj}.",
        "They walked {adv} along the {nature}, saying nothing.",
        "In the {adj} light, the {noun} looked almost {adj}.",
        "It was {when} that {first} finally understood the {feeling} in the {noun}.",
        "Her mother had kept {adj:a} {noun} from {place} on the shelf.",
    ),
    "lit_title": (
        "The {color} {nature}",
        "{feeling:cap}",
        "{nature:cap} {when}",
        "Letters from {place}",
        "{adj:a} {nature}",
    ),
    "support_user": (
        "{greet}, I ordered {item:a} {ago} and it {problem}.",
        "My order number is {#big}; {ask_check}",
        "I would {prefer} {remedy} {politely}.",
        "It was {meant} for my {relation} in {place}.",
        "{thanks} How long does {remedy} {usually} take?",
        "The {item} {problem}, and the box was {adj} {too}.",
        "Can I {return_verb} it at your {place} {store}?",
        "{ok_phrase} Do I need to {task}?",
        "I have tried {fixing} the {item} {#n} times {already}.",
        "{thanks_a_lot} for the {adj} help!",
        "The tracking page {tracking} since {day}.",
        "I paid {#n} dollars extra for {shipping}.",
        "Is there {shop:a} in {place} that can {fix_verb} it?",
        "I need it before {day} because of {occasion}.",
        "{sorry_user}, I forgot to say that the {item} also {problem}.",
        "Could you {ask_do} instead of {remedy}?",
    ),
    "support_agent": (
        "{hello} {first}, {thanks_contact}. I am {sorry} the {item} {problem}.",
        "Could you {send} {photo} of the {item} and {packaging}?",
        "I have {arranged} {remedy}; you should {see} it within {#n} {days}.",
        "Our {courier} in {place} will {collect} the {item} from your {address}.",
        "I {added} a note to order {#big} so {team} can {follow}.",
        "Is there anything else I can {help_with} {today}?",
        "You do not need to {agent_task}; {driver}.",
        "I understand, and I can also offer {remedy} {for_trouble}.",
        "Thanks for {patience} while I {check} the {item} details.",
        "The {item} {stock} at our {place} warehouse.",
        "According to {system}, the parcel {parcel} on {day}.",
        "I {escalated} the case to {team} and they will {reply} within {#n} hours.",
        "{sure} I will {send} {doc} {soon}.",
        "{remedy:cap} for {item:a} usually takes {#n} {days} once we {receive} it.",
    ),
    "qa_question": (
        "How do I {tverb} {tnoun:a} in {project} without restarting the {tnoun}?",
        "Why does the {tnoun} {tverb} every {tnoun} twice when `{option}` is set?",
        "Is it safe to {tverb} the {tnoun} while another {tnoun} is running?",
        "What is the best way to {tverb} {adj} {tnoun:pl} from {datasource}?",
        "Does {project} {tverb} {tnoun:pl} in order, or can they arrive {adj}?",
        "After upgrading to {#n}.{#n}, my {tnoun} {tverb:s3} {tnoun:pl} {adv}. Any idea why?",
        "Can `{option}` and `{option}` be used together with {datasource}?",
        "{greet}, is there a way to {tverb} only the {adj} {tnoun:pl}?",
    ),
    "qa_answer": (
        "You can set `{option}` to {#n} and then {tverb} the {tnoun} again.",
        "That happens because the {tnoun} {tverb:s3} the {tnoun} before the {tnoun} is ready.",
        "Yes, as long as each {tnoun} has its own {tnoun}.",
        "I usually {tverb} them in batches of {#n}; it keeps memory use {adj}.",
        "Check the {tnoun} log first; it often shows {adj:a} hint.",
        "{thanks} That worked, and the {tnoun} is {adj} now.",
        "Upgrading to version {#n}.{#n} fixed the {adj} {tnoun} for me.",
        "Try `{option}` first; {first} {last} wrote about it on the {project} wiki.",
        "No, the {tnoun} is not thread safe, so {tverb} it from one worker only.",
        "Same here on {lang_os}; {tverb:past} the {tnoun} and it went away.",
    ),
    "chat": (
        "Did you {hear} about the {event} in {place}?",
        "{yes_phrase} my {relation} was there on {day} and said it was {adj}.",
        "I still think the {noun} near the {noun} is {adj:a} place to {leisure}.",
        "Are you going to the {event} this {period}?",
        "Maybe, if the weather is {adj}; last time it was {adj}.",
        "We could meet at the {shop} on {day} and {travel} from there.",
        "Good idea, I will bring the {noun} I borrowed from {first}.",
        "Have you read the new {booktype} by {first} {last}?",
        "Not yet, but {first} said the {part} was {adj}.",
        "Let me know what you think of the {noun} in {place}.",
        "I spent {#n} hours {fixing} my {item} last {period}.",
        "Honestly, the {event} was more {adj} than I expected.",
        "{first} is moving to {place} in {month}.",
        "Do you still {hobby} on {day} mornings?",
        "Only when {condition}; work has been {adj} lately.",
        "My {relation} just adopted {pet:a} called {petname}.",
        "That reminds me, {first} owes me {#n} dollars from the {event}.",
        "We should plan a trip to {place} before {period}.",
        "The new {shop} on {street} Street has {adj} {dish}.",
        "I tried it on {day}; the {dish} was {adj} but {adj}.",
    ),
}

LAYOUT: dict[str, object] = {
    "joiner": " ",
    "wrap": 68,
    "academic_sections": ("1. Introduction", "2. Data and methods", "3. Results", "4. Discussion"),
    "abstract": "Abstract",
    "tech_sections": (
        "Quick start", "Configuration", "Usage", "Examples", "Troubleshooting", "API overview",
        "Performance notes", "Design notes",
    ),
    "install": "Installation",
    "install_lead": (
        "Install the package with your usual tool:", "Run this once:", "Get the latest release:",
        "From a terminal:", "Installing takes a few seconds:",
    ),
    "code_lead": ("For example:", "A minimal example:", "The snippet below shows the idea:",
                  "Here is a complete example:"),
    "list_lead": ("Highlights:", "Main features:", "Changes in this release:", "Key options:"),
    "ency_sections": ("History", "Description", "Geography", "Legacy"),
    "speakers": {"support": ("Customer", "Agent"), "qa": ("Q", "A"), "chat": ("A", "B")},
    "colon": ": ",
}


def _toponym(rng: random.Random) -> str:
    return rng.choice(POOLS["topo_head"]) + rng.choice(POOLS["topo_tail"])


def ency_subject(rng: random.Random, kind: str) -> dict[str, str]:
    """Fixed slots (subj, kind, plast) naming the subject of an encyclopedia article."""
    if kind == "place":
        return {"subj": _toponym(rng), "kind": rng.choice(POOLS["place_kind"])}
    if kind == "species":
        animal = rng.choice(POOLS["sp_animal"])
        return {"subj": f"{rng.choice(POOLS['sp_mark'])} {rng.choice(POOLS['sp_range'])} {animal}", "kind": animal}
    if kind == "person":
        last = rng.choice(POOLS["last"])
        return {"subj": f"{rng.choice(POOLS['first'])} {last}", "plast": last, "kind": rng.choice(POOLS["role"])}
    structure = rng.choice(POOLS["structure"])
    return {"subj": f"{_toponym(rng)} {structure}", "kind": structure}
