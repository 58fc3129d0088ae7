// The C++ example bot: protocol 1 (docs/protocol.md) with nlohmann-json (Debian's package).
//
// Plays the first legal action of every decision, in every game, and rebuilds the lists sent
// as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
// checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
// Build: g++ -std=c++20 -O2 -o bot bot.cpp
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

using json = nlohmann::json;

int main() {
    std::ios::sync_with_stdio(false);
    std::map<std::string, json> kept;  // the whole lists rebuilt so far in this deal
    std::string line;
    while (std::getline(std::cin, line)) {
        json message = json::parse(line);
        std::string type = message.value("type", "");
        if (type == "hello") {
            std::cout << json{{"type", "ready"}, {"name", "example-cpp"}}.dump() << std::endl;
        } else if (type == "act") {
            const json& observation = message["observation"];
            for (std::string key : {"history", "tricks"}) {
                if (!observation.contains(key + "_start")) continue;
                auto start = observation[key + "_start"].get<std::size_t>();
                json& whole = kept.try_emplace(key, json::array()).first->second;
                whole.erase(whole.begin() + std::min(start, whole.size()), whole.end());
                for (const json& entry : observation[key]) whole.push_back(entry);
            }
            json reply{{"id", message["id"]}, {"action", message["legal_actions"][0]}};
            std::cout << reply.dump() << std::endl;  // endl flushes
        } else if (type == "deal_end") {
            json tricks = kept.count("tricks") ? kept["tricks"] : json::array();
            json played = message["summary"].value("tricks", json::array());
            bool ok = tricks.size() <= played.size() &&
                      std::equal(tricks.begin(), tricks.end(), played.begin());
            std::size_t history = kept.count("history") ? kept["history"].size() : 0;
            std::cerr << "deal " << message["deal"] << ": " << tricks.size() << " tricks, "
                      << history << " history entries, " << (ok ? "ok" : "MISMATCH") << "\n";
            kept.clear();
        } else if (type == "bye") {
            return 0;
        }  // game_end, and notices of later versions: nothing to do
    }
    return 0;
}
