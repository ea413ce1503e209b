CREATE TABLE public.agent_messages (
    id integer NOT NULL,
    session_id character varying NOT NULL,
    message_data text NOT NULL,
    created_at timestamp without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);
CREATE SEQUENCE public.agent_messages_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;
ALTER SEQUENCE public.agent_messages_id_seq OWNED BY public.agent_messages.id;
CREATE TABLE public.agent_sessions (
    session_id character varying NOT NULL,
    created_at timestamp without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL,
    updated_at timestamp without time zone DEFAULT CURRENT_TIMESTAMP NOT NULL
);
ALTER TABLE ONLY public.agent_messages ALTER COLUMN id SET DEFAULT nextval('public.agent_messages_id_seq'::regclass);
INSERT INTO public.agent_messages VALUES (1, 'pg-trip', '{"content":"What''s the weather in Lisbon?","role":"user"}', '2026-12-01 11:39:11.785248');
INSERT INTO public.agent_messages VALUES (2, 'pg-trip', '{"arguments":"{\"city\": \"Lisbon\"}","call_id":"call_1","name":"lookup_weather","type":"function_call","id":"fc_1","status":"completed"}', '2026-12-01 11:39:11.86714');
INSERT INTO public.agent_messages VALUES (3, 'pg-trip', '{"call_id":"call_1","output":"Lisbon: 18 C and clear","type":"function_call_output"}', '2026-12-01 11:39:11.86714');
INSERT INTO public.agent_messages VALUES (4, 'pg-trip', '{"id":"msg_2","content":[{"annotations":[],"text":"It is Lisbon: 18 C and clear.","type":"output_text"}],"role":"assistant","status":"completed","type":"message"}', '2026-12-01 11:39:11.952637');
INSERT INTO public.agent_messages VALUES (5, 'pg-trip', '{"content":"Thanks","role":"user"}', '2026-12-01 11:39:11.997882');
INSERT INTO public.agent_messages VALUES (6, 'pg-trip', '{"id":"msg_3","content":[{"annotations":[],"text":"Answer 3: noted (Thanks).","type":"output_text"}],"role":"assistant","status":"completed","type":"message"}', '2026-12-01 11:39:12.043648');
INSERT INTO public.agent_messages VALUES (7, 'pg-hello', '{"content":"Hello","role":"user"}', '2026-12-01 11:39:12.258014');
INSERT INTO public.agent_messages VALUES (8, 'pg-hello', '{"id":"msg_4","content":[{"annotations":[],"text":"Answer 4: noted (Hello).","type":"output_text"}],"role":"assistant","status":"completed","type":"message"}', '2026-12-01 11:39:12.361788');
INSERT INTO public.agent_sessions VALUES ('pg-trip', '2026-12-01 11:39:11.785248', '2026-12-01 11:39:12.043648');
INSERT INTO public.agent_sessions VALUES ('pg-hello', '2026-12-01 11:39:12.258014', '2026-12-01 11:39:12.361788');
SELECT pg_catalog.setval('public.agent_messages_id_seq', 8, true);
ALTER TABLE ONLY public.agent_messages
    ADD CONSTRAINT agent_messages_pkey PRIMARY KEY (id);
ALTER TABLE ONLY public.agent_sessions
    ADD CONSTRAINT agent_sessions_pkey PRIMARY KEY (session_id);
CREATE INDEX idx_agent_messages_session_time ON public.agent_messages USING btree (session_id, created_at);
ALTER TABLE ONLY public.agent_messages
    ADD CONSTRAINT agent_messages_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.agent_sessions(session_id) ON DELETE CASCADE;
