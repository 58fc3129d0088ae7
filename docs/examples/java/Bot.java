// The Java example bot: protocol 1 (docs/protocol.md) with Gson (Debian's libgoogle-gson-java).
//
// Plays the first legal action of every decision, in every game, and rebuilds the lists sent
// as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
// checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
// Build: javac -cp /usr/share/java/gson.jar Bot.java; run: java -cp /usr/share/java/gson.jar:. Bot
import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

public class Bot {
    private static final String[] DELTA_LISTS = {"history", "tricks"};
    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    public static void main(String[] args) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        Map<String, JsonArray> kept = new HashMap<>(); // rebuilt so far in this deal
        String line;
        while ((line = in.readLine()) != null) {
            JsonObject message = JsonParser.parseString(line).getAsJsonObject();
            String type = message.has("type") ? message.get("type").getAsString() : "";
            JsonObject reply = new JsonObject();
            if (type.equals("hello")) {
                reply.addProperty("type", "ready");
                reply.addProperty("name", "example-java");
            } else if (type.equals("act")) {
                JsonObject observation = message.getAsJsonObject("observation");
                for (String key : DELTA_LISTS) {
                    if (!observation.has(key + "_start")) continue;
                    int start = observation.get(key + "_start").getAsInt();
                    JsonArray whole = kept.computeIfAbsent(key, k -> new JsonArray());
                    while (whole.size() > start) whole.remove(whole.size() - 1);
                    whole.addAll(observation.getAsJsonArray(key));
                }
                reply.add("id", message.get("id"));
                reply.add("action", message.getAsJsonArray("legal_actions").get(0));
            } else if (type.equals("deal_end")) {
                JsonArray tricks = kept.getOrDefault("tricks", new JsonArray());
                JsonObject summary = message.getAsJsonObject("summary");
                JsonArray played = summary.has("tricks") ? summary.getAsJsonArray("tricks")
                                                         : new JsonArray();
                boolean ok = tricks.size() <= played.size();
                for (int i = 0; ok && i < tricks.size(); i++) {
                    ok = tricks.get(i).equals(played.get(i));
                }
                int history = kept.getOrDefault("history", new JsonArray()).size();
                System.err.printf("deal %d: %d tricks, %d history entries, %s%n",
                        message.get("deal").getAsInt(), tricks.size(), history,
                        ok ? "ok" : "MISMATCH");
                kept.clear();
                continue;
            } else if (type.equals("bye")) {
                return;
            } else {
                continue; // game_end, and notices of later versions
            }
            out.print(GSON.toJson(reply) + "\n");
            out.flush();
        }
    }
}
