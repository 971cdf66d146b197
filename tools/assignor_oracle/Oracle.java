import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Runs Apache Kafka's own client-side assignors on scenarios read from stdin, one per block:
 *   S assignor                      (range | roundrobin | sticky | cooperative-sticky)
 *   T topic count                   (one per topic, any order)
 *   R topic partition rack,rack     (replica racks of one partition; optional)
 *   M member instance|- rack|- generation userdataHex|-|= topics|- owned|-
 *       (topics comma-separated, owned as topic#p,topic#p; "=" for empty user data)
 *   E
 * and prints, per member in input order, "A member topic#p,...|-" (Java's list order), then "D".
 * Also: "U sticky generation owned" / "U coop generation" print Java's user data as hex.
 */
public final class Oracle {
    private static List<String> split(String s) {
        return s.equals("-") ? new ArrayList<>() : new ArrayList<>(Arrays.asList(s.split(",")));
    }

    private static List<TopicPartition> partitions(String s) {
        List<TopicPartition> out = new ArrayList<>();
        for (String item : split(s)) {
            int at = item.lastIndexOf('#');
            out.add(new TopicPartition(item.substring(0, at), Integer.parseInt(item.substring(at + 1))));
        }
        return out;
    }

    private static String hex(ByteBuffer buffer) {
        StringBuilder sb = new StringBuilder();
        ByteBuffer b = buffer.duplicate();
        while (b.hasRemaining()) sb.append(String.format("%02x", b.get()));
        return sb.toString();
    }

    private static ByteBuffer unhex(String s) {
        if (s.equals("-")) return null;
        if (s.equals("=")) return ByteBuffer.allocate(0);
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return ByteBuffer.wrap(out);
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException(name);
        }
    }

    private static String format(List<TopicPartition> tps) {
        if (tps.isEmpty()) return "-";
        StringBuilder sb = new StringBuilder();
        for (TopicPartition tp : tps) {
            if (sb.length() > 0) sb.append(',');
            sb.append(tp.topic()).append('#').append(tp.partition());
        }
        return sb.toString();
    }

    private static void run(String name, Map<String, Integer> topics, Map<TopicPartition, List<String>> racks,
                            List<String[]> members, PrintStream out) {
        Map<String, Node> nodes = new LinkedHashMap<>();
        Node noRack = new Node(0, "h", 1, null);
        List<PartitionInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Integer> t : topics.entrySet()) {
            for (int p = 0; p < t.getValue(); p++) {
                List<String> rs = racks.getOrDefault(new TopicPartition(t.getKey(), p), Collections.emptyList());
                List<Node> replicas = new ArrayList<>();
                for (String r : rs) replicas.add(nodes.computeIfAbsent(r, k -> new Node(nodes.size() + 1, "h", 1, k)));
                if (replicas.isEmpty()) replicas.add(noRack);
                Node[] array = replicas.toArray(new Node[0]);
                infos.add(new PartitionInfo(t.getKey(), p, array[0], array, array));
            }
        }
        List<Node> all = new ArrayList<>(nodes.values());
        all.add(noRack);
        Cluster cluster = new Cluster("c", all, infos, Collections.emptySet(), Collections.emptySet());
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (String[] m : members) {
            Subscription s = new Subscription(split(m[6]), unhex(m[5]), partitions(m[7]),
                Integer.parseInt(m[4]), m[3].equals("-") ? Optional.empty() : Optional.of(m[3]));
            s.setGroupInstanceId(m[2].equals("-") ? Optional.empty() : Optional.of(m[2]));
            subscriptions.put(m[1], s);
        }
        Map<String, Assignment> result;
        try {
            result = assignor(name).assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
        } catch (RuntimeException e) {
            out.println("F " + e.getClass().getSimpleName());
            out.println("D");
            return;
        }
        for (String[] m : members) {
            Assignment a = result.get(m[1]);
            out.println("A " + m[1] + " " + (a == null ? "?" : format(a.partitions())));
        }
        out.println("D");
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        PrintStream out = new PrintStream(System.out, false);
        System.setOut(System.err); // the assignors' log lines (log4j's console) stay off the answers
        String name = null;
        Map<String, Integer> topics = new LinkedHashMap<>();
        Map<TopicPartition, List<String>> racks = new HashMap<>();
        List<String[]> members = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "S": name = f[1]; topics.clear(); racks.clear(); members.clear(); break;
                case "T": topics.put(f[1], Integer.parseInt(f[2])); break;
                case "R": racks.put(new TopicPartition(f[1], Integer.parseInt(f[2])), split(f[3])); break;
                case "M": members.add(f); break;
                case "E": run(name, topics, racks, members, out); out.flush(); break;
                case "U":
                    if (f[1].equals("sticky")) {
                        StickyAssignor s = new StickyAssignor();
                        s.onAssignment(new Assignment(partitions(f[3])),
                            new ConsumerGroupMetadata("g", Integer.parseInt(f[2]), "m", Optional.empty()));
                        out.println(hex(s.subscriptionUserData(Set.of())));
                    } else {
                        CooperativeStickyAssignor c = new CooperativeStickyAssignor();
                        c.onAssignment(null, new ConsumerGroupMetadata("g", Integer.parseInt(f[2]), "m", Optional.empty()));
                        out.println(hex(c.subscriptionUserData(Set.of())));
                    }
                    out.flush();
                    break;
                default: break;
            }
        }
    }
}
